#pragma once
// Process-wide interrupt flag: SIGINT/SIGTERM set it; long waits poll it and unwind.

namespace bootstrap::core {

/// Install SIGINT/SIGTERM handlers that only record the signal (async-signal-safe).
void install_interrupt_handlers();

/// The signal received (SIGINT or SIGTERM), or 0.
[[nodiscard]] int interrupt_signal();

/// Sleep up to `seconds`, waking every 50 ms to poll the flag; false when interrupted.
[[nodiscard]] bool sleep_interruptible(double seconds);

/// Test hook: set or clear the flag as if a signal had arrived.
void set_interrupt_signal(int sig);

}  // namespace bootstrap::core
