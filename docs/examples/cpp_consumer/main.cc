// Builds a hierarchical layout with the installed core and checks one golden
// value of the algebra; exits non-zero on a mismatch.
#include <cstdio>

#include "strideweave/layout/algebra.h"
#include "strideweave/layout/layout.h"

int main() {
  using strideweave::IntTuple;
  using strideweave::Layout;
  const Layout l(IntTuple::tuple({2, IntTuple::tuple({3, 4})}));
  const Layout c = strideweave::complement(Layout(4, 2), 24);
  std::printf("%s cosize=%lld; complement(4:2, 24) = %s\n", l.to_string().c_str(),
              static_cast<long long>(l.cosize()), c.to_string().c_str());
  return (l.to_string() == "(2,(3,4)):(1,(2,6))" && c.to_string() == "(2,3):(1,8)") ? 0 : 1;
}
