#!/bin/sh
# pmv6 as a release gate, in plain POSIX shell: runs the conformance suites against an installation
# and exits with pmv6's verdict (0 conformant, 1 violations, 2 usage error, unreachable target or
# rejected credentials, 3 inconclusive). Reports in $PMV6_REPORT_DIR: junit.xml for the CI's test
# view, summary.md for its job summary (pmv6 appends it to $GITHUB_STEP_SUMMARY when that is set).
#
# Settings (environment):
#   PMV6_TARGET      base URL of the installation (required; the API is at URL/index.php/api/v6/)
#   PMV6_USER, PMV6_PASSWORD   an Admin user (pmv6 reads them itself, never from a command line)
#   PMV6_VERSION     the pmv6 version to run (default 0.1.0; pin it, see CHANGELOG.md)
#   PMV6_REPORT_DIR  where the reports go (default pmv6-report)
#   PMV6_ARGS        more options of `pmv6 run`, e.g. "--expectations known.json --concurrency 8"
#   PMV6_BIN         the command that runs pmv6 (default: npx --yes pmv6@$PMV6_VERSION;
#                    `docker run --rm --network host -v "$PWD:/work" pmv6:local` for the image)
set -u
: "${PMV6_TARGET:?set PMV6_TARGET to the base URL of the installation}"
report="${PMV6_REPORT_DIR:-pmv6-report}"
bin="${PMV6_BIN:-npx --yes pmv6@${PMV6_VERSION:-0.1.0}}"

# $bin and $PMV6_ARGS are split into words on purpose.
# shellcheck disable=SC2086
$bin run --target "$PMV6_TARGET" --report-dir "$report" ${PMV6_ARGS:-}
code=$?

echo "pmv6: exit code $code; JUnit $report/junit.xml; summary $report/summary.md"
exit "$code"
