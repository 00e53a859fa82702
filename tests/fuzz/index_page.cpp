// Fuzz target: a simple-repository project page (lockfile::parse_index_page) read as PEP 691
// JSON, as PEP 503 HTML and with no Content-Type (the body decides), plus the URL and entity
// helpers it uses on the page's first line.

#include "lockfile/index_page.hpp"
#include "core/strings.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    std::string_view body = fuzz::as_text(data, size);
    const std::string page_url = "https://index.example/simple/pkg/";
    for (std::string_view type : {"application/vnd.pypi.simple.v1+json", "text/html", ""}) {
        auto files = lockfile::parse_index_page(body, type, page_url);
        if (!files) continue;
        for (const auto& f : *files)
            if (!f.sha256.empty() && f.sha256.size() != 64)
                fuzz::invariant_failed("a sha256 that is not 64 digits", f.sha256);
    }
    std::string_view line = body.substr(0, body.find('\n'));
    (void)core::percent_decode(line);
    (void)lockfile::decode_html_entities(line);
    (void)lockfile::resolve_url(page_url, line);
    return 0;
}
