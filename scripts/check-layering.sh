#!/usr/bin/env bash
# ARCHITECTURE.md's layering, checked from the sources: every `#include "<mod>/..."` in
# src/<m>/ names <m> itself or a module that <m> links directly (bs_<mod> among the DEPS of
# <m>'s bs_module(...) in CMakeLists.txt), and a third-party header is included only by the
# module that links the library owning it (toml++, CLI11, nlohmann/json, yaml-cpp, libarchive,
# libelf) or, for libcurl (dlopen()ed, headers only), by net/. The build enforces the module
# part too (each module's include path holds only its own headers and those of what it links),
# but only transitively; and third-party headers sit in /usr/include, where every module sees
# them. Prints one line per violation (file:line: what) and exits 1 when there is any.
#
#   scripts/check-layering.sh [ROOT]     ROOT holds CMakeLists.txt and src/ (default: the repo)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cmakelists=$root/CMakeLists.txt
[ -f "$cmakelists" ] || { echo "check-layering: no $cmakelists" >&2; exit 2; }
[ -d "$root/src" ] || { echo "check-layering: no $root/src" >&2; exit 2; }

# module<TAB>dep dep ...: the DEPS (and PUBLIC_DEPS) of each bs_module(<name> ...) call plus
# what a later target_link_libraries(bs_<name> ...) adds; comments dropped, each call joined
# across lines up to its closing parenthesis.
deps_table=$(awk '
  { sub(/#.*/, "") }
  !inside && /^[[:space:]]*(bs_module[[:space:]]*\(|target_link_libraries[[:space:]]*\([[:space:]]*bs_)/ {
    inside = 1; text = ""
  }
  inside {
    text = text " " $0
    if (index($0, ")")) {
      tll = (text ~ /target_link_libraries/)
      sub(/^[[:space:]]*[a-z_]+[[:space:]]*\(/, "", text); sub(/\).*/, "", text)
      n = split(text, w, /[[:space:]]+/); name = ""; in_deps = tll
      for (i = 1; i <= n; i++) {
        if (w[i] == "") continue
        if (name == "") { name = w[i]; if (tll) sub(/^bs_/, "", name); continue }
        if (w[i] ~ /^(SOURCES|DEPS|PUBLIC_DEPS)$/) { in_deps = (w[i] != "SOURCES"); continue }
        if (w[i] ~ /^(PUBLIC|PRIVATE|INTERFACE)$/) continue
        if (in_deps) deps[name] = deps[name] " " w[i]
      }
      if (!(name in order)) { order[name] = ++count; names[count] = name }
      inside = 0
    }
  }
  END { for (i = 1; i <= count; i++) print names[i] "\t" deps[names[i]] }' "$cmakelists")
[ -n "$deps_table" ] || { echo "check-layering: no bs_module(...) call in $cmakelists" >&2; exit 2; }

# third_party_owner HEADER: sets `owner` to the CMake target of the library that owns HEADER (a
# module may include it when it links that target), "@net" for libcurl (net/ dlopen()s it and
# takes only its headers), or "" for a header no module owns. No subshell: it runs per include.
third_party_owner() {
    case $1 in
        toml++/*) owner='${BS_TOML}' ;;  # CMakeLists.txt: the shared or the header-only target
        CLI/*) owner=CLI11::CLI11 ;;
        nlohmann/*) owner=nlohmann_json::nlohmann_json ;;
        yaml-cpp/*) owner='${BS_YAML}' ;;
        archive.h | archive_entry.h) owner='${BS_ARCHIVE}' ;;
        openssl/*) owner='${BS_CRYPTO}' ;;
        libelf.h | gelf.h | libelf/*) owner='${BS_ELF}' ;;
        curl/*) owner="@net" ;;
        *) owner="" ;;
    esac
}

declare -A is_module=()
while IFS=$'\t' read -r mod _; do is_module[$mod]=1; done <<<"$deps_table"
checked=0
violations=0
while IFS=$'\t' read -r mod deps; do
    dir=$root/src/$mod
    [ -d "$dir" ] || continue
    checked=$((checked + 1))
    deps_padded=" $deps "
    while IFS= read -r hit; do
        [ -n "$hit" ] || continue
        file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; text=${rest#*:}
        rel=${file#"$root"/}
        if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^/\"]+)/[^\"]*\" ]]; then
            used=${BASH_REMATCH[1]}
            [ "$used" = "$mod" ] && continue
            [ -n "${is_module[$used]:-}" ] || continue  # not a module (e.g. a generated file)
            if [[ $deps_padded != *" bs_$used "* ]]; then
                echo "$rel:$line: $mod/ includes \"$used/...\" but bs_$mod does not link" \
                    "bs_$used (its DEPS in CMakeLists.txt:$deps)"
                violations=$((violations + 1))
            fi
        elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
            third_party_owner "${BASH_REMATCH[1]}"
            [ -n "$owner" ] || continue
            if [ "$owner" = "@net" ]; then
                [ "$mod" = net ] && continue
                echo "$rel:$line: <${BASH_REMATCH[1]}> is libcurl's, which only net/ may include"
                violations=$((violations + 1))
            elif [[ $deps_padded != *" $owner "* ]]; then
                echo "$rel:$line: $mod/ includes <${BASH_REMATCH[1]}> but bs_$mod does not link" \
                    "$owner (${BASH_REMATCH[1]%%/*}'s target), the library that owns it (ARCHITECTURE.md: one owner per library)"
                violations=$((violations + 1))
            fi
        fi
    done < <(find "$dir" -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.in' \) \
                 -print0 | sort -z | xargs -0 -r grep -Hn '^[[:space:]]*#[[:space:]]*include' || true)
done <<<"$deps_table"

if [ $violations -gt 0 ]; then
    echo "check-layering: $violations include(s) break the layering (ARCHITECTURE.md)" >&2
    exit 1
fi
echo "check-layering: $checked modules, every include is of a linked module" >&2
