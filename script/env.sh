# Sourced by the scripts: where the cached Ruby and gems live, and which Ruby to use.
# RPERF_RUBY_SERIES (3.3 by default, or 3.4) picks the Ruby the scripts build and use.
RPERF_CACHE="${RPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rperf}"
export RPERF_RUBY_SERIES="${RPERF_RUBY_SERIES:-3.3}"
case "$RPERF_RUBY_SERIES" in
  3.3) RPERF_RUBY_PREFIX="$RPERF_CACHE/ruby-3.3.8" ;;
  *) RPERF_RUBY_PREFIX="$RPERF_CACHE/ruby-$RPERF_RUBY_SERIES" ;;
esac
if [ -n "${RUBY:-}" ]; then
  RPERF_RUBY="$RUBY"
elif [ "$RPERF_RUBY_SERIES" = 3.3 ] && command -v ruby >/dev/null 2>&1 \
     && ruby -e 'exit(RUBY_VERSION >= "3.3" && RUBY_VERSION < "3.4" ? 0 : 1)' 2>/dev/null; then
  RPERF_RUBY="$(command -v ruby)"
else
  RPERF_RUBY="$RPERF_RUBY_PREFIX/bin/ruby"
fi
RPERF_RUBY_BIN="$(dirname "$RPERF_RUBY")"
RPERF_BUNDLE="$RPERF_RUBY_BIN/bundle"
export PATH="$RPERF_RUBY_BIN:$PATH"
# Gems live in the cache too, per Ruby version, so a fresh clone reuses them.
export GEM_HOME="$RPERF_CACHE/gems/$("$RPERF_RUBY" -e 'print RUBY_VERSION' 2>/dev/null || echo none)"
export GEM_PATH="$GEM_HOME"
export PATH="$GEM_HOME/bin:$PATH"
export BUNDLE_SILENCE_ROOT_WARNING=1
export BUNDLE_GEMFILE="${BUNDLE_GEMFILE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Gemfile}"
