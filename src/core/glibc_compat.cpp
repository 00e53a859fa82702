// Linked into every executable of a portable build (BOOTSTRAP_PORTABLE, see CMakeLists.txt).
// There libstdc++ is linked statically, and GCC 12's libstdc++.a, built on glibc 2.36, calls
// arc4random() for std::random_device; any use of std::runtime_error pulls that object in, and
// with it a GLIBC_2.36 symbol version, which Ubuntu 22.04's glibc 2.35 would refuse. The link
// redirects that call here (-Wl,--wrap=arc4random): the same 32 random bits from getrandom(2),
// which glibc has had since 2.25. It is not part of bs_core's archive (it must be linked even
// though nothing of ours names it).
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" std::uint32_t __wrap_arc4random(void) {
    std::uint32_t value = 0;
    auto* out = reinterpret_cast<unsigned char*>(&value);
    std::size_t have = 0;
    while (have < sizeof value) {
        ssize_t n = getrandom(out + have, sizeof value - have, 0);
        if (n > 0) have += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EINTR) std::abort();  // arc4random cannot fail either
    }
    return value;
}
