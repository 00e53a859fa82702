#pragma once
// The one owner of a dlopen(3) handle: the libraries loaded on first use (libcurl in net/,
// libcuda and NVML in device/) so that bootstrap runs on hosts without them.

#include <string>

namespace bootstrap::core {

/// dlopen(path, RTLD_NOW | RTLD_LOCAL), dlclose on destruction. `Unload::never` adds
/// RTLD_NODELETE: the handle is released but the code stays mapped (a library that starts its
/// own threads, such as libcuda after cuInit, must not be unmapped under them).
class SharedLibrary {
public:
    enum class Unload { on_close, never };

    explicit SharedLibrary(const std::string& path, Unload unload = Unload::on_close);
    ~SharedLibrary();
    SharedLibrary(SharedLibrary&& other) noexcept;
    SharedLibrary& operator=(SharedLibrary&&) = delete;
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    [[nodiscard]] bool loaded() const { return m_handle != nullptr; }
    /// Why dlopen failed, without glibc's leading "PATH: " (the caller names the path).
    [[nodiscard]] const std::string& error() const { return m_error; }

    /// The symbol's address, or nullptr (also when the library is not loaded).
    [[nodiscard]] void* address(const char* name) const;
    /// The symbol cast to the function pointer type `Fn`, or nullptr.
    template <class Fn>
    [[nodiscard]] Fn symbol(const char* name) const {
        return reinterpret_cast<Fn>(address(name));
    }

private:
    void* m_handle = nullptr;
    std::string m_error;
};

}  // namespace bootstrap::core
