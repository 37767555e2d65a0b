// The emulated device queue (device/queue.h): the shipped backend of the
// Metal carrier on machines without an Apple GPU.
//
// Buffers are host memory that only the device thread touches: commands reach
// it through their Access. Command buffers run one after another on the
// device thread, each after the configured latency (so asynchrony is
// observable: a submission returns long before its event completes).
// Completion callbacks run on a separate completion thread. Faults are armed
// per stage and fire once: the next allocation throws, the next copy command
// buffer fails at completion, the next synchronize() throws.
//
// The queue and its two threads live for the whole process (never destroyed).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>

#include "strideweave/device/queue.h"

namespace strideweave::device {

enum class Fault { kAllocation, kCopy, kSynchronize };

class EmulatedQueue;

// The emulated queue behind metal_queue().
EmulatedQueue& emulated_metal_queue();

// The time each command buffer takes on the device thread before its commands
// run (0 by default). Also set from STRIDEWEAVE_METAL_LATENCY_US at start.
void set_emulated_latency(std::chrono::microseconds latency);
std::chrono::microseconds emulated_latency();

// Arms `fault` with `error` (non-null; ValueError otherwise), replacing an
// armed one. Disarm all with clear_emulated_faults(), which returns how many
// were armed and never fired.
void inject_emulated_fault(Fault fault, std::exception_ptr error);
int clear_emulated_faults() noexcept;

// How many command buffers were submitted and not yet completed.
int64_t emulated_pending();

// The device bytes held by live buffers.
int64_t emulated_allocated_bytes();

}  // namespace strideweave::device
