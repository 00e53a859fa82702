#include "core/fd.hpp"

#include <unistd.h>

namespace bootstrap::core {

void Fd::reset() { (void)close(); }

int Fd::close() {
    if (m_fd < 0) return 0;
    // Linux releases the descriptor even when close(2) fails (EINTR included): never retry it.
    return ::close(std::exchange(m_fd, -1));
}

}  // namespace bootstrap::core
