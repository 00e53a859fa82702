#include "core/shared_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace bootstrap::core {

SharedLibrary::SharedLibrary(const std::string& path, Unload unload) {
    int flags = RTLD_NOW | RTLD_LOCAL | (unload == Unload::never ? RTLD_NODELETE : 0);
    m_handle = ::dlopen(path.c_str(), flags);
    if (!m_handle) {
        const char* why = ::dlerror();
        m_error = why ? why : "unknown dlopen error";
        if (m_error.rfind(path + ": ", 0) == 0) m_error.erase(0, path.size() + 2);
    }
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)), m_error(std::move(other.m_error)) {}

SharedLibrary::~SharedLibrary() {
    if (m_handle) ::dlclose(m_handle);
}

void* SharedLibrary::address(const char* name) const { return m_handle ? ::dlsym(m_handle, name) : nullptr; }

}  // namespace bootstrap::core
