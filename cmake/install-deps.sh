#!/usr/bin/env bash
# Installs the Debian packages nextword needs that are not installed yet.
#   cmake/install-deps.sh          what building and running needs
#   cmake/install-deps.sh --train  that, plus oneDNN for data/stories/train.sh's
#                                  bf16 build (-DNEXTWORD_DNNL=ON), whose CMake
#                                  package also asks for OpenCL's headers and loader
#   cmake/install-deps.sh --package  that, plus what `cpack -G DEB` runs:
#                                  dpkg-shlibdeps (dpkg-dev) and file
#   cmake/install-deps.sh --test   that, plus what the test suite needs
# Runs apt-get as root, or through sudo.
set -euo pipefail

packages=(cmake make g++ pkg-config libcli11-dev nlohmann-json3-dev libopenblas-dev libncurses-dev
          catch2 libboost1.74-dev libpcre2-dev python3 help2man)
if [[ "${1:-}" == "--train" || "${1:-}" == "--test" ]]; then
  packages+=(libdnnl-dev ocl-icd-opencl-dev opencl-headers)
fi
if [[ "${1:-}" == "--package" || "${1:-}" == "--test" ]]; then
  packages+=(dpkg-dev file)
fi
if [[ "${1:-}" == "--test" ]]; then
  # The PyTorch reference; the format check; clang with its sanitizer and
  # libFuzzer runtimes and OpenMP for the sanitizer build and the fuzzers;
  # Chromium for the HTML page's browser test; tmux for `type`'s terminal test
  # and, with bash-completion, for the shell test of the installed completion;
  # presage (its library, text2ngram and stock database) as the yardstick of
  # keystroke savings, never linked into nextword; GNU parallel and rsync (its
  # --basefile transfer) for the split-input and multi-host tests; Open MPI
  # for data-parallel training (the CMake option NEXTWORD_MPI); time (peak
  # memory) and mount (a small tmpfs that fills) for the error matrix; wrk
  # and slowhttptest load and attack `nextword serve`.
  # Neovim and Vim run `nextword lsp` headless (tests/editors), Neovim also
  # in tmux as a person types. lintian, mmdebstrap (a Debian 12 root to
  # install the package into), systemd (systemd-analyze for the service unit),
  # systemd-container (systemd-nspawn boots that root to run the service)
  # for the Debian package's test.
  packages+=(python3-torch clang-format clang libclang-rt-14-dev libomp-dev chromium tmux
             presage libpresage-dev libpresage-data parallel rsync openmpi-bin libopenmpi-dev
             time mount wrk slowhttptest bash-completion neovim vim lintian mmdebstrap systemd
             systemd-container)
fi

missing=()
for p in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
if (( ${#missing[@]} == 0 )); then
  exit 0
fi

echo "installing: ${missing[*]}" >&2
sudo=()
if (( EUID != 0 )); then sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >&2
