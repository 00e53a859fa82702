#pragma once
// What the image tests share: reading a context's files and writing a recipe's.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bootstrap::test {

/// The whole text of `p` ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// `p` holding `text`, its directories made.
inline void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

}  // namespace bootstrap::test
