# `make test`'s last line: the tests that passed, failed, were ignored, and were skipped by a
# switch (SERVERBENCH_SKIP_*), each of those named. A test skipped by a switch prints
# `SKIP: <binary>::<test>: <why>` (crates/cli/tests/skip/mod.rs) and passes for cargo, so it
# is taken out of the passed count here.
/^test result:/ { passed += $4; failed += $6; ignored += $8 }
# The line may follow a single-threaded run's `test NAME ... ` on the same line.
/SKIP: [^ ]+: / {
    line = substr($0, index($0, "SKIP: ") + 6)
    name = line
    sub(/: .*/, "", name)
    if (!(name in seen)) {
        seen[name] = 1
        skipped++
        list = list "  skipped: " line "\n"
    }
}
END {
    printf "%s", list
    printf "tests: %d passed, %d failed, %d ignored, %d skipped by a switch\n", \
        passed - skipped, failed, ignored, skipped
}
