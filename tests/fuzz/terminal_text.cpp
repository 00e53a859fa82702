// Fuzz target: a child's output through the filters every byte of it passes before it reaches a
// log or a terminal (core::TerminalFilter, plain_text, TerminalTranscript, OutputTail) and the
// secret mask after them (core::SecretMask), as exec::run_process chains them.
//
// Input: "SECRET\nOUTPUT". The first byte of OUTPUT picks the chunk size the output is fed in.
// Invariants: what comes out is UTF-8 without an escape, a C0 control but '\n' ('\t' and '\r'
// where the mode keeps them), DEL or a C1 control; the chunks change nothing of it; and a
// secret (without '*', at least k_min_masked long) is never in the masked output.

#include <string>

#include "core/redact.hpp"
#include "core/terminal_filter.hpp"
#include "core/terminal_text.hpp"
#include "fuzz_support.hpp"

namespace {

using bootstrap::core::TerminalFilter;
using bootstrap::fuzz::invariant_failed;

/// Decodes `text` as UTF-8; aborts at a byte that is not, or at a control `allowed` lacks.
void check_text(std::string_view text, std::string_view allowed, const char* what) {
    for (size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b < 0x80) {
            if ((b < 0x20 || b == 0x7f) && allowed.find(static_cast<char>(b)) == std::string_view::npos)
                invariant_failed(what, text);
            ++i;
            continue;
        }
        const int n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 0;
        if (n == 0 || i + static_cast<size_t>(n) > text.size()) invariant_failed(what, text);
        char32_t cp = b & (0x7f >> n);
        for (int k = 1; k < n; ++k) {
            const auto c = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
            if ((c & 0xc0) != 0x80) invariant_failed(what, text);
            cp = (cp << 6) | (c & 0x3f);
        }
        const char32_t least = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
        if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) invariant_failed(what, text);
        if (cp >= 0x80 && cp <= 0x9f) invariant_failed(what, text);  // C1
        i += static_cast<size_t>(n);
    }
}

std::string filter_in_chunks(std::string_view output, size_t chunk, TerminalFilter::Options options) {
    TerminalFilter filter(options);
    std::string out;
    for (size_t i = 0; i < output.size(); i += chunk) filter.feed(output.substr(i, chunk), out);
    filter.finish(out);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    const std::string_view input = fuzz::as_text(data, size);
    const size_t newline = input.find('\n');
    const std::string secret(newline == std::string_view::npos ? std::string_view() : input.substr(0, newline));
    const std::string_view output = newline == std::string_view::npos ? input : input.substr(newline + 1);
    const size_t chunk = output.empty() ? 1 : 1 + static_cast<unsigned char>(output[0]) % 17;

    const TerminalFilter::Options redraw{TerminalFilter::CarriageReturn::redraw, true};
    const std::string whole = filter_in_chunks(output, output.size() + 1, {});
    check_text(whole, "\n\t", "filter (newline mode) let a control through");
    if (filter_in_chunks(output, chunk, {}) != whole) invariant_failed("the chunks changed the filter's text", output);
    const std::string redrawn = filter_in_chunks(output, chunk, redraw);
    check_text(redrawn, "\n\r", "filter (redraw mode) let a control through");
    if (filter_in_chunks(redrawn, chunk, redraw) != redrawn)
        invariant_failed("filtering twice changed the text", output);
    check_text(core::plain_text(output), "\n", "plain_text let a control through");

    // As exec::run_process: filter, mask, then the transcript (on the terminal) or nothing.
    core::SecretMask mask({secret}, redraw);
    core::TerminalTranscript transcript({}, 1 + chunk % 7 * 10);
    core::OutputTail tail;
    TerminalFilter filter(redraw);
    std::string masked, lines;
    auto pass_on = [&](std::string_view text) {
        masked += text;
        std::string kept = transcript.feed(text);
        tail.feed(kept);
        lines += kept;
    };
    for (size_t i = 0; i < output.size(); i += chunk) {
        std::string text;
        filter.feed(output.substr(i, chunk), text);
        pass_on(mask.feed(text));
    }
    std::string rest;
    filter.finish(rest);
    rest = mask.feed(rest);
    rest += mask.flush();
    pass_on(rest);
    lines += transcript.finish();
    check_text(lines, "\n", "the transcript let a control through");
    check_text(tail.last_line(), "", "the output tail let a control through");
    // The secret as the filter shows it (what the mask looks for: its raw bytes, when they are
    // not text, can only recur by chance across the filter's U+FFFD characters).
    const std::string shown = core::filtered_text(secret, redraw);
    if (shown.size() >= core::k_min_masked && shown.find('*') == std::string::npos) {
        if (masked.find(shown) != std::string::npos) invariant_failed("a secret passed the mask", masked);
        if (lines.find(shown) != std::string::npos) invariant_failed("a secret reached the transcript", lines);
    }
    return 0;
}
