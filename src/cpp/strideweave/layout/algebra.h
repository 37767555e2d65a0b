// The layout algebra of spec/core-layout: coalesce, composition, complement,
// right inverse, divide and product, with CuTe's semantics.
//
// Every function is pure. Where CuTe only checks a condition statically (or
// not at all), these functions check it and throw ValueError naming the
// condition and the failing mode, so a result is never silently wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "strideweave/layout/layout.h"

namespace strideweave {

// A tiler applied mode by mode: tiler[i] acts on mode i of the other operand.
using Tiler = std::vector<Layout>;

// Post: size(result) == size(layout); depth(result) <= 1;
//       result(i) == layout(i) for all 0 <= i < size(layout).
// A size-0 layout coalesces to 0:0, a size-1 layout to 1:0.
Layout coalesce(const Layout& layout);

// R = a o b.
// Post: compatible(b, R); R(i) == a(b(i)) for all 0 <= i < size(b), where `a`
//       is extended past its size by letting its last coalesced mode grow.
// Throws ValueError naming the stride or shape divisibility condition and the
// failing mode of coalesce(a) when the composition is not admissible.
Layout composition(const Layout& a, const Layout& b);

// Mode-by-mode composition: mode i of the result is composition(a.mode(i),
// tiler[i]); modes of `a` past the tiler are kept. Throws ValueError when the
// tiler has more modes than `a`.
Layout composition(const Layout& a, const Tiler& tiler);

// Post: R(i) for i >= 1 is never in the image of `layout`; R's strides are
//       increasing; (filtered layout, R) is a bijection onto
//       [0, ceil(cotarget / span) * span) where span covers `layout`'s modes.
// Modes of extent <= 1 or stride 0 are ignored. Throws ValueError naming the
// mode when the sorted modes overlap or a stride is not divisible, and for a
// negative cotarget.
Layout complement(const Layout& layout, int64_t cotarget);

// Post: layout(R(i)) == i for all 0 <= i < size(R); R is coalesced; 1:0 when
//       no mode of stride 1 exists, 0:0 when size(layout) == 0.
Layout right_inverse(const Layout& layout);

// composition(a, (b, complement(b, size(a)))).
Layout logical_divide(const Layout& a, const Layout& b);

// Mode i of the result is logical_divide(a.mode(i), tiler[i]).
Layout logical_divide(const Layout& a, const Tiler& tiler);

// Mode-by-mode division regrouped as ((tiles...), (rests..., untouched modes...)).
// For a single Layout `b`, the same as logical_divide(a, b).
Layout zipped_divide(const Layout& a, const Tiler& tiler);
Layout zipped_divide(const Layout& a, const Layout& b);

// Mode-by-mode division regrouped as ((tiles...), rests..., untouched modes...).
Layout tiled_divide(const Layout& a, const Tiler& tiler);
Layout tiled_divide(const Layout& a, const Layout& b);

// (a, composition(complement(a, size(a) * cosize(b)), b)).
Layout logical_product(const Layout& a, const Layout& b);

}  // namespace strideweave
