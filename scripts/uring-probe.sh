#!/usr/bin/env bash
# Whether this kernel lets a process set up an io_uring (the engine's `--io uring` backend).
# Prints "1" on stdout when it does not (the value `make test` gives SERVERBENCH_SKIP_URING: the
# engine's `_uring` test twins then run on epoll, each saying so) and says on stderr what it
# found. io_uring is refused by Docker's default seccomp profile, `kernel.io_uring_disabled` and
# some distributions. An explicit SERVERBENCH_SKIP_URING in the environment wins.
set -uo pipefail
if [ -n "${SERVERBENCH_SKIP_URING:-}" ]; then
  echo "io_uring probe: SERVERBENCH_SKIP_URING=$SERVERBENCH_SKIP_URING given, not probed" >&2
  echo "$SERVERBENCH_SKIP_URING"
  exit 0
fi
# io_uring_setup(2) is system call 425 on every architecture that has it; a 120-byte zeroed
# struct io_uring_params is enough to ask for a ring of 8 entries.
why=$(python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)
if fd < 0:
    print(os.strerror(ctypes.get_errno()))
else:
    os.close(fd)
PY
)
if [ -z "$why" ]; then
  echo "io_uring available: the engine's tests run on both backends" >&2
else
  echo "io_uring is refused here ($why): the engine's io_uring tests run on epoll" \
    "(SERVERBENCH_SKIP_URING=1)" >&2
  echo 1
fi
