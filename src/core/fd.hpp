#pragma once
// The one owner of a POSIX file descriptor: move-only, closed by the destructor.

#include <utility>

namespace bootstrap::core {

/// Owns one file descriptor (or none: -1). Closing it is the destructor's job, or close()'s
/// when the caller needs to know whether close(2) failed (a written file's last error).
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    [[nodiscard]] int get() const { return m_fd; }
    [[nodiscard]] bool is_open() const { return m_fd >= 0; }
    explicit operator bool() const { return is_open(); }

    /// Close now (nothing when not open); later calls and the destructor do nothing.
    void reset();
    /// Close now and return close(2)'s result (0 when not open); errno says why it failed.
    [[nodiscard]] int close();
    /// Give the descriptor up without closing it.
    [[nodiscard]] int release() { return std::exchange(m_fd, -1); }

private:
    int m_fd = -1;
};

}  // namespace bootstrap::core
