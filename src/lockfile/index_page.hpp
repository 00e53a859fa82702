#pragma once
// Simple-repository project pages (`<index>/<project>/`): PEP 691 JSON
// (`application/vnd.pypi.simple.v1+json`) and PEP 503 HTML, read into the files they list.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::lockfile {

struct IndexFile {
    std::string filename;  // PEP 691 "filename"; in HTML the href's last path segment, decoded
    std::string url;       // absolute (against the page's <base href> or URL), without the fragment
    std::string sha256;    // lower-case hex; "" when the index gives none
    bool yanked = false;
};

/// Which of a page's files to keep, asked with each one's file name (its sha256 is checked
/// either way); null keeps all.
using KeepFile = std::function<bool(std::string_view filename)>;

/// The files a project page lists (those `keep` wants). `content_type` (the response's Content-Type) picks the
/// format: a `...json` type is PEP 691, an `...html` type PEP 503; otherwise the body decides.
/// `page_url` is the URL the page came from (after redirects): relative links resolve against
/// it (in HTML, against the first `<base href>` when there is one) and errors name it. A hash
/// in a link's fragment is read as pip reads it. A malformed JSON page, an unknown PEP 691
/// major version or a sha256 that is not 64 hex digits is an error.
[[nodiscard]] Result<std::vector<IndexFile>> parse_index_page(std::string_view body, std::string_view content_type,
                                                              const std::string& page_url, const KeepFile& keep = {});

/// HTML character references in an attribute value: `&amp;` `&lt;` `&gt;` `&quot;` `&apos;`
/// `&#NN;` `&#xHH;`. Unknown or malformed ones are kept as written.
[[nodiscard]] std::string decode_html_entities(std::string_view text);

/// RFC 3986 reference resolution of `href` against `base` ("../../files/x.whl" against
/// "http://h/simple/x/" -> "http://h/files/x.whl").
[[nodiscard]] std::string resolve_url(std::string_view base, std::string_view href);

}  // namespace bootstrap::lockfile
