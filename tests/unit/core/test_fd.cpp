#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/fd.hpp"
#include "core/shared_library.hpp"

using namespace bootstrap;

namespace {

bool is_open_fd(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

}  // namespace

TEST_CASE("Fd closes its descriptor once, and moves hand it over") {
    int raw = -1;
    {
        core::Fd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        REQUIRE(fd);
        raw = fd.get();
        CHECK(is_open_fd(raw));
        core::Fd moved(std::move(fd));
        CHECK_FALSE(fd.is_open());
        CHECK(moved.get() == raw);
        core::Fd assigned;
        assigned = std::move(moved);
        CHECK(assigned.get() == raw);
        CHECK(is_open_fd(raw));
    }
    CHECK_FALSE(is_open_fd(raw));

    core::Fd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    raw = fd.get();
    CHECK(fd.close() == 0);
    CHECK_FALSE(fd.is_open());
    CHECK_FALSE(is_open_fd(raw));
    CHECK(fd.close() == 0);  // nothing left to close

    core::Fd kept(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    int released = kept.release();
    CHECK_FALSE(kept.is_open());
    CHECK(is_open_fd(released));
    ::close(released);
}

TEST_CASE("SharedLibrary loads, finds symbols, and says why it cannot load") {
    core::SharedLibrary libc("libc.so.6");
    REQUIRE(libc.loaded());
    using strlen_fn = size_t (*)(const char*);
    auto fn = libc.symbol<strlen_fn>("strlen");
    REQUIRE(fn != nullptr);
    CHECK(fn("four") == 4);
    CHECK(libc.symbol<strlen_fn>("no_such_symbol_in_libc") == nullptr);

    core::SharedLibrary missing("/nonexistent/libnothing.so.1");
    CHECK_FALSE(missing.loaded());
    CHECK(missing.address("anything") == nullptr);
    // glibc's "PATH: " prefix is dropped: callers name the path themselves.
    CHECK(missing.error().rfind("/nonexistent/", 0) == std::string::npos);
    CHECK(missing.error().find("No such file") != std::string::npos);

    core::SharedLibrary kept("libc.so.6", core::SharedLibrary::Unload::never);
    CHECK(kept.loaded());
    core::SharedLibrary moved(std::move(kept));
    CHECK(moved.loaded());
    CHECK_FALSE(kept.loaded());
}
