#!/usr/bin/env bash
# Lays out TFLM and its third-party trees from local git snapshots (bare repos), at the commits
# TFLM's own download scripts pin, so TFLM's Makefile finds everything and downloads nothing.
#
#   MIRROR=/path/to/mirror ./setup_tflm.sh ../../target/tflm/tflite-micro [TFLM_COMMIT]
#
# MIRROR holds <owner>+<name>/repo bare git directories (as the `fetch` tool lays them out):
# tensorflow+tflite-micro, ARM-software+CMSIS-NN, ARM-software+CMSIS_6, ARM-software+Cortex_DFP,
# google+flatbuffers, google+gemmlowp, google+ruy, mborgerding+kissfft.
set -euo pipefail
MIRROR=${MIRROR:?set MIRROR to the folder of the git snapshots (<owner>+<name>/repo)}
DEST=${1:?usage: setup_tflm.sh DEST [TFLM_COMMIT]}
TFLM_COMMIT=${2:-HEAD}

extract() {  # repo commit dest
  local git="$MIRROR/$1/repo"
  mkdir -p "$3"
  git --git-dir="$git" archive "$2" | tar -x -C "$3"
}

if [ ! -d "$DEST/tensorflow" ]; then
  extract tensorflow+tflite-micro "$TFLM_COMMIT" "$DEST"
fi
MK="$DEST/tensorflow/lite/micro/tools/make"
DL="$MK/downloads"
mkdir -p "$DL"

# Pinned commits: read from TFLM's own download scripts / third_party_downloads.inc.
pin() { grep -o "$1" "$2" | head -1 | grep -o '[0-9a-f]\{40\}'; }
GEMMLOWP=$(pin 'gemmlowp/archive/[0-9a-f]*' "$MK/third_party_downloads.inc")
RUY=$(pin 'ruy/archive/[0-9a-f]*' "$MK/third_party_downloads.inc")
FLATBUFFERS_TAG=$(grep -o 'flatbuffers/archive/refs/tags/v[0-9.]*' "$MK/third_party_downloads.inc" | sed 's/.*tags\///; s/\.$//')
KISSFFT_TAG=$(grep -o 'kissfft/archive/refs/tags/v[0-9]*' "$MK/third_party_downloads.inc" | sed 's/.*tags\///')
CMSIS6=$(grep -m1 'ZIP_PREFIX="' "$MK/ext_libs/cmsis_download.sh" | grep -o '[0-9a-f]\{40\}')
DFP=$(grep 'ZIP_PREFIX="' "$MK/ext_libs/cmsis_download.sh" | sed -n 2p | grep -o '[0-9a-f]\{40\}')
CMSISNN=$(grep -m1 'ZIP_PREFIX_NN="' "$MK/ext_libs/cmsis_nn_download.sh" | grep -o '[0-9a-f]\{40\}')
echo "gemmlowp $GEMMLOWP, ruy $RUY, flatbuffers $FLATBUFFERS_TAG, kissfft $KISSFFT_TAG," \
     "CMSIS_6 $CMSIS6, Cortex_DFP $DFP, CMSIS-NN $CMSISNN" >&2

# As download_and_extract.sh does: extract, delete *BUILD files, apply the TFLM patch.
if [ ! -d "$DL/gemmlowp" ]; then
  extract google+gemmlowp "$GEMMLOWP" "$DL/gemmlowp"; find "$DL/gemmlowp" -type f -name '*BUILD' -delete
fi
if [ ! -d "$DL/ruy" ]; then
  extract google+ruy "$RUY" "$DL/ruy"; find "$DL/ruy" -type f -name '*BUILD' -delete
fi
if [ ! -d "$DL/flatbuffers" ]; then
  extract google+flatbuffers "$FLATBUFFERS_TAG" "$DL/flatbuffers"
  find "$DL/flatbuffers" -type f -name '*BUILD' -delete
  patch -p1 -d "$DL/flatbuffers" < "$MK/flatbuffers.patch"
fi
if [ ! -d "$DL/kissfft" ]; then
  extract mborgerding+kissfft "$KISSFFT_TAG" "$DL/kissfft"
  find "$DL/kissfft" -type f -name '*BUILD' -delete
  patch -p1 -d "$DL/kissfft" < "$DEST/third_party/kissfft/kissfft.patch"
fi
# As ext_libs/cmsis_download.sh does: CMSIS_6 at downloads/cmsis, Cortex_DFP inside it.
if [ ! -d "$DL/cmsis" ]; then
  extract ARM-software+CMSIS_6 "$CMSIS6" "$DL/cmsis"
  extract ARM-software+Cortex_DFP "$DFP" "$DL/cmsis/Cortex_DFP"
fi
# As ext_libs/cmsis_nn_download.sh does.
if [ ! -d "$DL/cmsis_nn" ]; then
  extract ARM-software+CMSIS-NN "$CMSISNN" "$DL/cmsis_nn"
fi
# pigweed (git clone in pigweed_download.sh) is only used by TFLM's tests, not by the
# microlite library: an empty directory makes the script skip its clone.
mkdir -p "$DL/pigweed"
echo "SUCCESS" >&2
