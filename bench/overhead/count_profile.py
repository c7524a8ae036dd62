#!/usr/bin/env python3
"""Counts in lockscope profile files without the report's reader (docs/profile-format.md §9):
threads, locks, acquisitions over lock sites, and the dropped counters. Used by compare.sh scale
for profiles too large to report in little memory."""
import glob, struct, sys, zlib

SECTION = struct.Struct("<IIQQII")
COUNTERS = {1: "dropped_sites", 2: "dropped_locks", 5: "reentrant_calls", 7: "threads_seen",
            9: "dropped_threads"}
LOCK_OPERATIONS = {1, 2, 3, 4}  # lock, trylock, timedlock, clocklock (src/common/profile_format.h)


def count(path):
    data = open(path, "rb").read()
    assert data[:8] == b"LKSCOPE\0", f"{path}: not a profile"
    sections = struct.unpack_from("<I", data, 24)[0]
    at, out = 40, {"threads": 0, "locks": 0, "lock_acquisitions": 0}
    for _ in range(sections):
        kind, size, n, payload_size, crc, _ = SECTION.unpack_from(data, at)
        payload = memoryview(data)[at + 32:at + 32 + payload_size]
        at += 32 + payload_size
        assert zlib.crc32(payload) == crc, f"{path}: section {kind} checksum mismatch"
        if kind == 4:
            out["threads"] = n
        elif kind == 5:
            out["locks"] = n
        elif kind == 6:
            for operation, calls, failed in struct.iter_unpack("<4xH18xQ8xQ96x", payload):
                if operation in LOCK_OPERATIONS:
                    out["lock_acquisitions"] += calls - failed
        elif kind == 8:
            for key, value in struct.iter_unpack("<I4xQ", payload):
                if key in COUNTERS:
                    out[COUNTERS[key]] = value
    return out


if __name__ == "__main__":
    for path in sorted(glob.glob(sys.argv[1] + "/*.lsprof")):
        print(" ".join(f"{k}={v}" for k, v in count(path).items()))
