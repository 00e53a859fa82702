#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "core/redact.hpp"

using namespace bootstrap;

TEST_CASE("redact_url hides passwords and bare tokens, nothing else", "[redact]") {
    CHECK(core::redact_url("https://user:s3cret@host.example/simple") == "https://user:***@host.example/simple");
    CHECK(core::redact_url("https://tok3n@host/simple/") == "https://***@host/simple/");
    CHECK(core::redact_url("https://pypi.org/simple") == "https://pypi.org/simple");
    CHECK(core::redact_url("https://host/path@not-userinfo") == "https://host/path@not-userinfo");
    CHECK(core::redact_url("not a url") == "not a url");
    CHECK(core::redact_url("") == "");
}

TEST_CASE("redact_text finds every URL with credentials in free text", "[redact]") {
    const std::string argv =
        "uv pip install --index-url http://u:PASS@127.0.0.1:9/simple "
        "--extra-index-url https://TOKEN@h2/x pkg";
    auto out = core::redact_text(argv);
    CHECK(out.find("PASS") == std::string::npos);
    CHECK(out.find("TOKEN") == std::string::npos);
    CHECK(out == "uv pip install --index-url http://u:***@127.0.0.1:9/simple --extra-index-url https://***@h2/x pkg");
    CHECK(core::redact_text("no urls here: a@b") == "no urls here: a@b");
    CHECK(core::redact_text("'https://a:b@c'") == "'https://a:***@c'");
    CHECK(core::redact_text("x://") == "x://");
}

TEST_CASE("secret-looking names are shown as ***", "[redact]") {
    for (const char* name :
         {"HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GOOGLE_CREDENTIALS", "my_token"})
        CHECK(core::is_secret_name(name));
    for (const char* name : {"PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "KEYBOARD"})
        CHECK_FALSE(core::is_secret_name(name));
    CHECK(core::is_secret_name("MY_VAR", {"MY_VAR"}));
    CHECK(core::shown_value("HF_TOKEN", "abc") == "***");
    CHECK(core::shown_value("PIP_INDEX_URL", "https://u:p@h/s") == "https://u:***@h/s");
    CHECK(core::strip_credentials("https://u:p@h/s") == "https://h/s");
}

TEST_CASE("expand_home reads ~ and $HOME as a shell would", "[fs]") {
    CHECK(core::expand_home("~", "/home/u") == "/home/u");
    CHECK(core::expand_home("~/.venvs/x", "/home/u") == "/home/u/.venvs/x");
    CHECK(core::expand_home("$HOME/x", "/home/u") == "/home/u/x");
    CHECK(core::expand_home("${HOME}/x", "/home/u") == "/home/u/x");
    CHECK(core::expand_home("~other/x", "/home/u") == "~other/x");
    CHECK(core::expand_home("$HOMEDIR/x", "/home/u") == "$HOMEDIR/x");
    CHECK(core::expand_home("a/~/b", "/home/u") == "a/~/b");
    CHECK(core::expand_home("~/x", "") == "~/x");
}

TEST_CASE("url_credentials lists the secret parts of URLs in text", "[redact]") {
    CHECK(core::url_credentials("a https://u:p4ss@h/x b http://tok3n@h2 c https://h3/") ==
          std::vector<std::string>{"p4ss", "tok3n"});
    CHECK(core::url_credentials("no url").empty());
}

TEST_CASE("SecretMask masks every occurrence, across chunks, longest secret first", "[redact]") {
    core::SecretMask mask({"hunter22", "hunter22-long", "abc"});  // "abc" is too short to mask
    std::string out = mask.feed("pw=hunter22; again hun");
    out += mask.feed("ter22-long and abc");
    out += mask.feed(" hunt");
    out += mask.flush();
    CHECK(out == "pw=***; again *** and abc ***");  // "hunt" may have been "hunter22": masked
    core::SecretMask none;
    CHECK(none.empty());
    CHECK(none.feed("hunter22") == "hunter22");
    // A prefix of a secret is held back only while it could still become one.
    core::SecretMask held({"secret-value"});
    CHECK(held.feed("x secret-") == "x ");
    CHECK(held.feed("vaLUE") == "secret-vaLUE");
}

TEST_CASE("SecretMask shows nothing of a secret held back when the output ends", "[redact]") {
    // One secret is a prefix of another: the output ends with the shorter one, held back while
    // the longer one could still come. The end of the stream must mask it, not emit it.
    auto masked = [](core::SecretMask& mask, std::string_view text) {
        std::string out = mask.feed(text);
        return out + mask.flush();
    };
    core::SecretMask mask({"abcd-1234", "abcd-1234-5678"});
    CHECK(masked(mask, "key abcd-1234") == "key ***");
    // A longer secret's first characters, at the end: masked too.
    core::SecretMask prefix({"abcd-1234-5678"});
    CHECK(masked(prefix, "key abcd-12") == "key ***");
    // The shorter one and more of the longer one: all of it. Then text that is no secret.
    core::SecretMask both({"abcd-1234", "abcd-1234-5678"});
    CHECK(masked(both, "abcd-1234-56") == "***");
    CHECK(masked(both, "abcd-1234-x") == "***-x");
}

TEST_CASE("secret values are masked in shown text and by later masks, never short ones", "[redact]") {
    struct Forget {
        ~Forget() { core::clear_secret_values(); }
    } forget;
    CHECK(core::redact_text("python -c x tok-abc123 --token=tok-abc123") ==
          "python -c x tok-abc123 --token=tok-abc123");
    core::add_secret_values({"tok-abc123", "abc", "tok-abc123-longer"});
    CHECK(core::redact_text("python -c x tok-abc123 --token=tok-abc123 tok-abc123-longer abc") ==
          "python -c x *** --token=*** *** abc");
    // URL credentials are still redacted, the value inside one as well.
    CHECK(core::redact_text("https://u:pw-9@h/x https://tok-abc123@h/y") == "https://u:***@h/x https://***@h/y");
    core::SecretMask mask({"other-secret"});
    CHECK(mask.feed("tok-abc123 other-secret\n") == "*** ***\n");
    core::clear_secret_values();
    CHECK(core::redact_text("tok-abc123") == "tok-abc123");
    CHECK(core::is_secret_name("AUTH_TOKEN"));
    CHECK_FALSE(core::is_secret_name("AUTH_SERVER_PORT"));
    CHECK(core::is_secret_name("AUTH_SERVER_PORT", {"AUTH_SERVER_PORT"}));  // declared: secret
}

TEST_CASE("SecretMask after a TerminalFilter looks for each value as the filter shows it", "[redact]") {
    // A value holding an escape or bytes that are not UTF-8: the child prints it raw, the filter
    // shows it without the escape (and with U+FFFD), and that is what must be masked.
    const core::TerminalFilter::Options as_text{};
    core::SecretMask mask({"tok\x1b[0men-value", "ab\xbf\xbd\xef\xbf"}, as_text);
    const std::string shown = core::filtered_text("x tok\x1b[0men-value y\n", as_text);
    CHECK(mask.feed(shown) + mask.flush() == "x *** y\n");
    const std::string odd = core::filtered_text("ab\xbf\xbd\xef\xbf\xef\xbf\xbd!\n", as_text);
    CHECK(mask.feed(odd) + mask.flush() == "***\xef\xbf\xbd!\n");
}
