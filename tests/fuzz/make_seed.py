#!/usr/bin/env python3
"""Turns the profile directories of real recordings into fuzz inputs (fuzz_input.h's layout):
one input per profile file, the .lsprof first and then the trace files of its directory, each
chunk prefixed by its size as a little-endian u32.

usage: make_seed.py OUT_DIR RECORDING_DIR...
"""
import pathlib
import struct
import sys


def chunk(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    made = 0
    for recording in map(pathlib.Path, sys.argv[2:]):
        traces = b"".join(chunk(t.read_bytes()) for t in sorted(recording.glob("*.lstrace")))
        for profile in sorted(recording.glob("*.lsprof")):
            (out / f"{recording.name}-{profile.stem}").write_bytes(
                chunk(profile.read_bytes()) + traces)
            made += 1
    if made == 0:
        print(f"make_seed.py: no *.lsprof in {' '.join(sys.argv[2:])}", file=sys.stderr)
        return 1
    print(f"make_seed.py: {made} seed inputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
