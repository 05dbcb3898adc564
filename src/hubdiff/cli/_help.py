"""Help text more than one command shows."""

EXIT_CODES = """exit codes:
  0  nothing beyond tolerance
  1  changes found, or claims that no longer hold
  2  usage or baseline error, or a file that cannot be written
  3  the Hub or a source could not be read (missing, gated, malformed, unreachable, not cached)"""

SOURCE_HELP = (
    "a Hub repo as owner/name[@revision] (branch, tag, refs/pr/N or sha; default main), or a local folder"
)
