# Sourced by scripts/setup.sh, sanitize.sh and fuzz.sh.
#
# bs_configure DIR CMAKE_ARGS...: configure the build directory DIR (cmake -S . -B DIR -G Ninja
# CMAKE_ARGS...) when it has no build.ninja yet, or when one of the -DBOOTSTRAP_*=VALUE options in
# CMAKE_ARGS differs from DIR's cache (say a build/ configured without -Werror that CI now wants
# with it). Other arguments (compiler, build type) count only for a new directory, as in CMake.
bs_configure() {
    local dir=$1
    shift
    local reason=""
    if [ ! -f "$dir/build.ninja" ] || [ ! -f "$dir/CMakeCache.txt" ]; then
        reason="new"
    else
        local arg name want have
        for arg in "$@"; do
            [[ $arg =~ ^-D(BOOTSTRAP_[A-Z_]+)(:[A-Z]+)?=(.*)$ ]] || continue
            name=${BASH_REMATCH[1]}
            want=${BASH_REMATCH[3]}
            have=$(sed -n "s/^$name:[A-Z]*=//p" "$dir/CMakeCache.txt" | head -1)
            if [ "$have" != "$want" ]; then
                reason="$name was '${have:-unset}', now '$want'"
                break
            fi
        done
    fi
    [ -n "$reason" ] || return 0
    [ "$reason" = new ] || echo "configure: reconfiguring $dir ($reason)" >&2
    cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
}
