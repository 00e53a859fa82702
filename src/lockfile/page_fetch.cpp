#include "lockfile/page_fetch.hpp"

#include "net/http.hpp"

namespace bootstrap::lockfile {

Result<FetchedPage> fetch_project_page(const std::string& url,
                                       std::optional<std::chrono::steady_clock::time_point> deadline) {
    net::Request request;
    request.url = url;
    request.deadline = deadline;
    request.max_bytes = k_max_project_page;
    request.headers["Accept"] = std::string(k_simple_accept);
    BS_TRY(auto response, net::get(request));
    return FetchedPage{std::move(response.body), std::move(response.content_type), std::move(response.effective_url)};
}

}  // namespace bootstrap::lockfile
