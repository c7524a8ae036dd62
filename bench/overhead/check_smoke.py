#!/usr/bin/python3
"""The bench-smoke tests: each overhead program is run briefly and a figure it prints is checked
against a constant or a bound that must hold physically, not only its exit status.

Usage: check_smoke.py overhead|stack-capture|lock-heavy|owner-write-cost PROGRAM

The bounds are wide enough for a loaded two-core VM (where a run's wall time can grow tenfold) and
narrow enough that a garbage figure fails: zero, negative, NaN, a missing row, a time per operation
below one nanosecond (no lock or clock read is that cheap) or above 100 us. Exits non-zero, saying
which figure is wrong, on any violation.
"""
import json
import math
import re
import subprocess
import sys

# Real (wall) time per operation: a floor that no locked instruction, rdtsc or clock read beats,
# a ceiling that only a broken or absurdly starved run reaches.
FLOOR_NS = 1.0
CEILING_NS = 100_000.0


class SmokeFailure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise SmokeFailure(message)


def run(argv):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    expect(result.returncode == 0,
           f"{' '.join(argv)} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result.stdout


def google_benchmark_rows(program):
    """The rows of a Google Benchmark program's JSON, by name, times in ns."""
    document = json.loads(run([program, "--benchmark_min_time=0.01", "--benchmark_format=json"]))
    rows = {}
    for row in document["benchmarks"]:
        expect(row["time_unit"] == "ns", f"{row['name']}: time unit {row['time_unit']}")
        expect(row["iterations"] > 0, f"{row['name']}: {row['iterations']} iterations")
        real = row["real_time"]
        expect(math.isfinite(real) and FLOOR_NS <= real <= CEILING_NS,
               f"{row['name']}: {real} ns per iteration, outside [{FLOOR_NS}, {CEILING_NS}]")
        rows[row["name"]] = row
    return rows


def check_overhead(program):
    rows = google_benchmark_rows(program)
    expected = {"pthread_mutex_pair", "pthread_mutex_trylock_pair", "std_mutex_pair",
                "pthread_mutex_pair_64_locks", "rdtsc", "clock_gettime_monotonic"}
    expect(set(rows) == expected, f"rows {sorted(rows)}, expected {sorted(expected)}")
    return {name: round(row["real_time"], 1) for name, row in rows.items()}


def check_stack_capture(program):
    rows = google_benchmark_rows(program)
    # stack_capture_bench.cpp: a recursion deeper than the limit, so every walk gives kFrames.
    frames = {name: row.get("frames") for name, row in rows.items()}
    expect(len(frames) == 4 and all(f == 10 for f in frames.values()),
           f"frames per capture {frames}, expected 10 in each of the four rows")
    # A DWARF walk interprets CFI for every frame; a frame-pointer walk loads two words a frame.
    # Tens of times apart (CPU time, less exposed to preemption than wall time); a factor of 3 is
    # the margin. kAuto must stay on frame pointers where the chain is whole and fall back to DWARF
    # where it is not, so its two rows sit on either side of the same gap.
    cpu = {name: row["cpu_time"] for name, row in rows.items()}
    expect(cpu["dwarf_capture"] > 3 * cpu["frame_pointer_capture"],
           f"DWARF {cpu['dwarf_capture']:.0f} ns is not 3x frame pointers' "
           f"{cpu['frame_pointer_capture']:.0f} ns")
    expect(cpu["auto_capture_without_frame_pointers"] > 3 * cpu["auto_capture_with_frame_pointers"],
           f"kAuto without frame pointers {cpu['auto_capture_without_frame_pointers']:.0f} ns is "
           f"not 3x kAuto with them ({cpu['auto_capture_with_frame_pointers']:.0f} ns): "
           "it does not switch between the two walks")
    return {name: round(t, 1) for name, t in cpu.items()}


def lock_heavy_checksum(pairs_per_thread):
    """lock_heavy.cpp's checksum, computed here: each thread's xorshift sequence is fixed, so each
    counter's sum is too, whatever the interleaving, as long as no update under a lock is lost."""
    mask = (1 << 64) - 1
    sums = [0] * 4
    for thread in range(2):
        state = (0x9E3779B97F4A7C15 * (thread + 1)) & mask
        for _ in range(pairs_per_thread):
            for _ in range(24):
                state ^= (state << 13) & mask
                state ^= state >> 7
                state ^= (state << 17) & mask
            sums[state % 4] += state & 0xFFFF
    checksum = 0
    for total in sums:
        checksum = (checksum * 31 + total) & mask
    return f"{checksum:016x}"


def check_lock_heavy(program):
    pairs_per_thread = 10000
    output = run([program, str(pairs_per_thread)])
    match = re.fullmatch(r"pairs (\d+) checksum ([0-9a-f]{16})\n", output)
    expect(match is not None, f"output not understood: {output!r}")
    expect(int(match[1]) == 2 * pairs_per_thread, f"{match[1]} pairs, expected {2 * pairs_per_thread}")
    expected = lock_heavy_checksum(pairs_per_thread)
    expect(match[2] == expected, f"checksum {match[2]}, computed {expected}")
    return {"pairs": int(match[1]), "checksum": match[2]}


def check_owner_write_cost(program):
    pairs_per_thread = 100000
    output = run([program, "1", str(pairs_per_thread)])
    rows = {}
    for line in output.splitlines()[1:]:
        match = re.fullmatch(r"(\S+)\s+([-\d.naif]+) s\s+([-\d.naif]+)x\s+(\d+)", line.strip())
        expect(match is not None, f"line not understood: {line!r}")
        rows[match[1]] = (float(match[2]), float(match[3]), int(match[4]))
    expect(list(rows) == ["none", "mutex-line", "own-line"], f"rows {list(rows)}")
    none_s = rows["none"][0]
    for mode, (wall_s, ratio, failed) in rows.items():
        # Two threads do the pairs side by side: the wall time is at least one thread's pairs.
        per_pair_ns = wall_s * 1e9 / pairs_per_thread
        expect(math.isfinite(per_pair_ns) and FLOOR_NS <= per_pair_ns <= CEILING_NS,
               f"{mode}: {per_pair_ns} ns per pair, outside [{FLOOR_NS}, {CEILING_NS}]")
        expect(abs(ratio - wall_s / none_s) <= 0.006 + 0.001 * ratio,
               f"{mode}: ratio {ratio} but {wall_s} / {none_s} s")
        expect(failed <= 2 * pairs_per_thread, f"{mode}: {failed} failed trylocks in "
               f"{2 * pairs_per_thread} acquisitions")
    return rows


CHECKS = {"overhead": check_overhead, "stack-capture": check_stack_capture,
          "lock-heavy": check_lock_heavy, "owner-write-cost": check_owner_write_cost}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        figures = CHECKS[sys.argv[1]](sys.argv[2])
    except SmokeFailure as failure:
        print(f"check_smoke.py {sys.argv[1]}: FAILED: {failure}", file=sys.stderr)
        return 1
    print(f"check_smoke.py {sys.argv[1]}: ok {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
