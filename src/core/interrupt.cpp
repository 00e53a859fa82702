#include "core/interrupt.hpp"

#include <chrono>
#include <thread>

#include <atomic>
#include <csignal>

namespace bootstrap::core {

namespace {
std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig) { g_signal.store(sig); }
}  // namespace

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking waits return EINTR and notice the flag
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return g_signal.load(); }

void set_interrupt_signal(int sig) { g_signal.store(sig); }

bool sleep_interruptible(double seconds) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (interrupt_signal() != 0) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return interrupt_signal() == 0;
}

}  // namespace bootstrap::core
