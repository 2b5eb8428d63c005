#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw output of one benchmark run into results.md, results.json
and PNG plots (gnuplot), and print the table.

    bench-report.py --raw DIR --out DIR [--check] [--command TEXT] [--only f1,r1,...]

DIR holds what tests/bench/bench-guest.sh wrote: k-*.txt (ndk_bench.ko),
u-*.txt (ndk-ubench), pt-*.txt (perftest), conditions.txt.  Sample
lines are "S measure variant param round total ops"; a sample's value
is total/ops (ns per operation; bytes per registration for M1, S1-mem).

Statistics per (measure, variant, param): median, p99 (nearest rank),
CV over every sample of every round.  Ratios compare medians (and p99s)
of ours and the baseline; for throughput measures the ratio is ours'
rate over the baseline's (higher is better), for costs ours' time over
the baseline's (lower is better).  U1 fits t = fixed + slope * pages by
least squares with relative weights (1/t^2), so small and large sizes
count alike.

--check (the smoke run): exit 1 unless every measure produced a finite
number and no run reported an error.  Speed is never judged.  --only
limits the check to the measures run (bench.sh --only).

"U measure param text" lines name a size this build does not support
(R1's huge-page MDLs before the engine maps 2 MiB pages): a row saying
so, never a failure.
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

# --- parsing ------------------------------------------------------------------


def parse_perftest(path, kind, rnd, samples, errors):
    """ib_write_bw: MsgRate -> ns per message; ib_read_lat: typical, p99."""
    text = open(path, errors="replace").read()
    for line in text.splitlines():
        f = line.split()
        if len(f) < 5 or not re.fullmatch(r"\d+", f[0]) or not re.fullmatch(r"\d+", f[1]):
            continue
        try:
            nums = [float(x) for x in f]
        except ValueError:
            continue
        size = int(nums[0])
        if kind == "write":  # bytes iters peak avg msgrate(Mpps)
            mpps = nums[4]
            if mpps <= 0 and nums[3] > 0:  # MB/s (2^20) fallback
                mpps = nums[3] * 1048576 / size / 1e6
            if mpps > 0:
                samples[("D1-write", "perftest", size)].append((rnd, 1000.0 / mpps))
                return
        else:  # bytes iters min max typical avg stdev p99 p99.9 (usec)
            samples[("D1-read", "perftest", size)].append((rnd, nums[4] * 1000.0))
            if len(nums) > 7:
                samples[("D1-read-p99", "perftest", size)].append((rnd, nums[7] * 1000.0))
            return
    errors.append(f"{os.path.basename(path)}: no result line")


def load(raw):
    samples = defaultdict(list)  # (measure, variant, param) -> [(round, value)]
    values, info, errors, ran, unsupported = {}, {}, [], [], []
    for path in sorted(glob.glob(os.path.join(raw, "*.txt"))):
        name = os.path.basename(path)[:-4]
        m = re.fullmatch(r"pt-(write|read)-r(\d+)", name)
        if m:
            parse_perftest(path, m.group(1), int(m.group(2)), samples, errors)
            continue
        m = re.fullmatch(r"[ku]-d1(?:-ioctl)?-r(\d+)", name)
        round_override = int(m.group(1)) if m else None
        suffix = "-host" if name.startswith("h-") else ""  # run on the build host
        for line in open(path, errors="replace"):
            f = line.split()
            if not f:
                continue
            if f[0] == "S" and len(f) == 7:
                ops = int(f[6])
                if ops <= 0:
                    continue
                rnd = round_override if round_override is not None else int(f[4])
                samples[(f[1], f[2] + suffix, int(f[3]))].append((rnd, int(f[5]) / ops))
            elif f[0] == "V" and len(f) == 3:
                values[f[1]] = float(f[2])
            elif f[0] == "I" and len(f) >= 3:
                info.setdefault(f[1], " ".join(f[2:]))
            elif f[0] == "U" and len(f) >= 3:
                unsupported.append((f[1], int(f[2]), " ".join(f[3:])))
            elif f[0] == "E":
                errors.append(f"{name}: {' '.join(f[1:])}")
            elif f[0] == "ok":
                ran.append(name)
            elif f[0] == "not" and len(f) > 1 and f[1] == "ok":
                errors.append(f"{name}: {line.strip()}")
    return samples, values, info, errors, ran, unsupported


# --- statistics -----------------------------------------------------------------


def stats(vals):
    v = sorted(vals)
    n = len(v)
    if not n:
        return None
    mid = n // 2
    median = v[mid] if n % 2 else (v[mid - 1] + v[mid]) / 2
    p99 = v[min(n - 1, max(0, math.ceil(0.99 * n) - 1))]
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return {"n": n, "median": median, "p99": p99, "mean": mean,
            "cv": sd / mean if mean else 0.0, "min": v[0], "max": v[-1],
            "rounds": 0}


def fit(points):
    """Weighted least squares t = a + b x with weights 1/t^2."""
    pts = [(x, y) for x, y in points if y > 0]
    if len(pts) < 2:
        return None
    w = [1.0 / (y * y) for _, y in pts]
    sw = sum(w)
    sx = sum(wi * x for wi, (x, _) in zip(w, pts))
    sy = sum(wi * y for wi, (_, y) in zip(w, pts))
    sxx = sum(wi * x * x for wi, (x, _) in zip(w, pts))
    sxy = sum(wi * x * y for wi, (x, y) in zip(w, pts))
    den = sw * sxx - sx * sx
    if den == 0:
        return None
    b = (sw * sxy - sx * sy) / den
    a = (sy - b * sx) / sw
    return {"fixed_ns": a, "slope_ns_per_page": b, "points": len(pts)}


# --- the report --------------------------------------------------------------------


class Report:
    def __init__(self, samples, values, info, unsupported=()):
        self.st = {}
        for key, lst in samples.items():
            s = stats([v for _, v in lst])
            s["rounds"] = len({r for r, _ in lst})
            self.st[key] = s
        self.values = values
        self.info = info
        self.rows = []
        self.fits = {}
        self.unsupported = list(unsupported)

    def get(self, m, v, p):
        return self.st.get((m, v, p))

    def params(self, m, v):
        return sorted(p for (mm, vv, p) in self.st if mm == m and vv == v)

    def row(self, mid, what, param, ours, base, kind, goal_op, goal, unit):
        """kind 'rate': ratio = base_ns / ours_ns; 'cost': ours_ns / base_ns."""
        o, b = self.get(*ours), self.get(*base)
        r = {"id": mid, "what": what, "param": param, "unit": unit,
             "goal": "info" if goal_op == "info" else f"{goal_op} {goal}",
             "ours": o, "baseline": b, "ours_key": list(ours), "base_key": list(base),
             "kind": kind}
        if o and b and o["median"] > 0 and b["median"] > 0:
            if kind == "rate":
                r["ratio"] = b["median"] / o["median"]
                r["ratio_p99"] = b["p99"] / o["p99"] if o["p99"] else None
            else:
                r["ratio"] = o["median"] / b["median"]
                r["ratio_p99"] = o["p99"] / b["p99"] if b["p99"] else None
            r["met"] = (None if goal_op == "info" else
                        r["ratio"] >= goal if goal_op == ">=" else r["ratio"] <= goal)
        else:
            r["ratio"] = r["ratio_p99"] = None
            r["met"] = None
        self.rows.append(r)
        return r

    def scalar(self, mid, what, param, value, goal_op, goal, unit, extra=""):
        r = {"id": mid, "what": what, "param": param, "unit": unit,
             "goal": "info" if goal_op == "info" else f"{goal_op} {goal}",
             "value": value, "ratio": value, "ratio_p99": None, "note": extra,
             "met": None if value is None or goal_op == "info" else
             (value >= goal if goal_op == ">=" else value <= goal)}
        self.rows.append(r)
        return r

    def build(self):
        for p in self.params("F1", "ndk"):
            self.row("F1", "fast-register + invalidate ops/s, ndk vs raw", f"{p} pages",
                     ("F1", "ndk", p), ("F1", "raw", p), "rate", ">=", 0.95, "ns/pair")
            self.row("F1", "same, vs raw with every work request signalled (raw-sig)",
                     f"{p} pages", ("F1", "ndk", p), ("F1", "raw-sig", p), "rate", ">=", 0.95,
                     "ns/pair")
            self.row("F1", "floor (raw-sig + the least NDK bookkeeping, inline) vs raw",
                     f"{p} pages", ("F1", "floor", p), ("F1", "raw", p), "rate", "info", None,
                     "ns/pair")
            self.row("F1", "floor vs raw-sig", f"{p} pages", ("F1", "floor", p),
                     ("F1", "raw-sig", p), "rate", "info", None, "ns/pair")
            self.row("F1", "ndk vs floor", f"{p} pages", ("F1", "ndk", p), ("F1", "floor", p),
                     "rate", "info", None, "ns/pair")
            self.row("F1", "floor-locked (floor + ndk.ko's locks, reference, counts) vs raw-sig",
                     f"{p} pages", ("F1", "floor-locked", p), ("F1", "raw-sig", p), "rate",
                     "info", None, "ns/pair")
            self.row("F1", "ndk vs floor-locked", f"{p} pages", ("F1", "ndk", p),
                     ("F1", "floor-locked", p), "rate", "info", None, "ns/pair")
            self.row("F1", "floor-lf (floor out of line, the least exclusion without locks) "
                     "vs raw-sig", f"{p} pages", ("F1", "floor-lf", p), ("F1", "raw-sig", p),
                     "rate", "info", None, "ns/pair")
        for v, what in (("atomic", "an atomic operation"),
                        ("irqsave", "an interrupt-disabled section"),
                        ("spin", "a spinlock section"),
                        ("spin-irqsave", "a spinlock section with interrupts off")):
            self.row("F1", f"calibration: {what} vs a function call", "",
                     ("F1-cal", v, 0), ("F1-cal", "call", 0), "cost", "info", None, "ns/op")
        for p in self.params("R1-reg", "ndk"):
            self.row("R1", "NdkRegisterMr latency vs raw (MR kept)", f"{p} pages",
                     ("R1-reg", "ndk", p), ("R1-reg", "raw", p), "cost", "<=", 1.05, "ns")
            self.row("R1", "NdkDeregisterMr latency vs raw (MR kept)", f"{p} pages",
                     ("R1-dereg", "ndk", p), ("R1-dereg", "raw", p), "cost", "<=", 1.05, "ns")
            self.row("R1", "NdkRegisterMr latency vs raw-alloc (MR per call)", f"{p} pages",
                     ("R1-reg", "ndk", p), ("R1-reg", "raw-alloc", p), "cost", "<=", 1.05, "ns")
            if self.get("R1-reg", "raw-bh", p):
                for m, what in (("R1-reg", "NdkRegisterMr"), ("R1-dereg", "NdkDeregisterMr")):
                    self.row("R1", f"{what} latency vs raw-bh (MR kept, posted with bottom "
                             "halves off as ndk.ko posts)", f"{p} pages",
                             (m, "ndk", p), (m, "raw-bh", p), "cost", "<=", 1.05, "ns")
            if self.get("R1-reg", "raw-mdl", p):
                self.row("R1", "NdkRegisterMr latency vs raw handed the same MDL "
                         "(raw-mdl: finds its chunks itself, MR kept)", f"{p} pages",
                         ("R1-reg", "ndk", p), ("R1-reg", "raw-mdl", p), "cost", "<=", 1.05,
                         "ns")
        for m, p, text in self.unsupported:
            self.rows.append({"id": m, "what": "NdkRegisterMr of a huge-page MDL: " + text
                              if m == "R1" else text,
                              "param": f"{p} pages" if m == "R1" else str(p),
                              "unit": "ratio", "goal": "<= 1.05", "value": None, "ratio": None,
                              "ratio_p99": None, "note": "not supported by this build",
                              "met": None, "unsupported": True})
        self.build_u1()
        for p in self.params("C1-lib", "hit-host"):
            s = self.get("C1-lib", "hit-host", p)
            self.scalar("C1", "cache hit path, native host, ns per Acquire + release "
                        "(instant backend: the generation is one virtual call)", f"{p} B",
                        s["median"], "<=", 100, "ns", "p99 %.0f ns" % s["p99"])
        for p in self.params("C1", "hit"):
            self.row("C1", "guest: cache hit vs miss (miss / hit)", f"{p} B",
                     ("C1", "hit", p), ("C1", "miss", p), "rate", "info", 0, "ns")
            self.row("C1", "guest: cache hit vs no cache (bypass)", f"{p} B",
                     ("C1", "hit", p), ("C1", "nocache", p), "cost", "info", 0, "ns")
        for p in self.params("C1-lib", "hit"):
            self.row("C1", "library hit path alone (instant backend): TCG guest vs native host",
                     f"{p} B", ("C1-lib", "hit", p), ("C1-lib", "hit-host", p), "cost", "info",
                     0, "ns")
        if "C1-stale-hits" in self.values:
            self.scalar("C1", "stale hits in munmap/mmap churn", "%d rounds" %
                        self.values.get("C1-churn-rounds", 0), self.values["C1-stale-hits"],
                        "<=", 0, "hits")
        for p in self.params("W1", "bind"):
            self.row("W1", "window bind+inval ops/s vs fast-register of the range", f"{p} pages",
                     ("W1", "bind", p), ("W1", "fr", p), "rate", ">=", 1.0, "ns/pair")
            self.row("W1", "re-registration cost / bind cost", f"{p} pages",
                     ("W1", "bind", p), ("W1", "rereg", p), "rate", ">=", 10, "ns/op")
        for p in self.params("D1-write", "ndk-k"):
            self.row("D1", "RDMA write throughput, NDK kernel QP vs a raw ib_core loop", f"{p} B",
                     ("D1-write", "ndk-k", p), ("D1-write", "raw", p), "rate", ">=", 1.0,
                     "ns/msg")
            self.row("D1", "RDMA write throughput, NDK kernel QP vs ib_write_bw", f"{p} B",
                     ("D1-write", "ndk-k", p), ("D1-write", "perftest", p), "rate", "info", 0,
                     "ns/msg")
        for p in self.params("D1-write", "ndk-u"):
            self.row("D1", "RDMA write throughput, libndk user QP vs ib_write_bw", f"{p} B",
                     ("D1-write", "ndk-u", p), ("D1-write", "perftest", p), "rate", ">=", 0.95,
                     "ns/msg")
        for p in self.params("D1-read", "ndk-u"):
            self.row("D1", "RDMA read latency (perf = 1/lat), libndk user QP vs ib_read_lat",
                     f"{p} B", ("D1-read", "ndk-u", p), ("D1-read", "perftest", p), "rate",
                     ">=", 0.95, "ns")
        for p in self.params("D1-write", "ndk-u-ioctl"):
            self.row("D1", "RDMA write throughput, libndk without rings (NDK_RINGS=0) vs ib_write_bw",
                     f"{p} B", ("D1-write", "ndk-u-ioctl", p), ("D1-write", "perftest", p), "rate",
                     "info", 0, "ns/msg")
        for p in self.params("D1-read", "ndk-u-ioctl"):
            self.row("D1", "RDMA read latency, libndk without rings (NDK_RINGS=0) vs ib_read_lat",
                     f"{p} B", ("D1-read", "ndk-u-ioctl", p), ("D1-read", "perftest", p), "rate",
                     "info", 0, "ns")
        for v in ("ndk-u", "ndk-u-ioctl"):
            for p in self.params("D1-read-post", v):
                self.row("D1", f"the post call of a read, {v}, vs the whole read (ib_read_lat's)",
                         f"{p} B", ("D1-read-post", v, p), ("D1-read", "perftest", p), "cost",
                         "info", 0, "ns")
            for p in self.params("D1-null-ioctl", v):
                self.row("D1", f"one system call on /dev/ndk (QUERY_INFO, {v} run) vs ib_read_lat's read",
                         "", ("D1-null-ioctl", v, p), ("D1-read", "perftest", 8), "cost",
                         "info", 0, "ns")
        for op in ("write", "read"):
            for v in ("ndk-u", "ndk-u-ioctl"):
                key = f"D1-syscalls-{op}-{v}"
                if key in self.values:
                    self.scalar("D1", f"system calls per {op}, {v} (libndk's count)", "",
                                self.values[key], "info", 0, "calls")
        for p in self.params("D1-read", "ndk-k"):
            self.row("D1", "RDMA read latency (perf = 1/lat), NDK kernel vs a raw ib_core loop",
                     f"{p} B", ("D1-read", "ndk-k", p), ("D1-read", "raw", p), "rate",
                     ">=", 1.0, "ns")
            self.row("D1", "RDMA read latency (perf = 1/lat), NDK kernel vs ib_read_lat",
                     f"{p} B", ("D1-read", "ndk-k", p), ("D1-read", "perftest", p), "rate",
                     "info", 0, "ns")
            self.row("D1", "RDMA read latency, floor-lf (the least an out-of-line NdkRead "
                     "needs) vs the raw loop", f"{p} B", ("D1-read", "floor-lf", p),
                     ("D1-read", "raw", p), "rate", "info", 0, "ns")
        for p in self.params("M1", "ndk"):
            self.row("M1", "slab bytes per live registration, ndk vs ibv_reg_mr", f"{p} B",
                     ("M1", "ndk", p), ("M1", "verbs", p), "cost", "<=", 1.0, "bytes")
        self.build_s1()
        self.build_b1()

    def build_b1(self):
        """B1: ndkblk vs nvme-rdma per fio job: IOPS, p99 completion
        latency, CPU time per I/O (all CPUs, both ends in one guest)."""
        jobs = sorted({m[3:] for (m, v, p) in self.st if m.startswith("B1-")
                       and not m.startswith(("B1-p99-", "B1-cpu-"))})
        for job in jobs:
            main = {}
            for p in self.params("B1-" + job, "ndkblk"):
                main[p] = self.row("B1", f"ndkblk vs nvme-rdma, fio {job}, IOPS", f"{p} B",
                         ("B1-" + job, "ndkblk", p), ("B1-" + job, "nvme", p), "rate", ">=",
                         0.9, "ns/IO")
                main[("p99", p)] = self.row(
                    "B1", f"ndkblk vs nvme-rdma, fio {job}, p99 completion latency",
                    f"{p} B", ("B1-p99-" + job, "ndkblk", p), ("B1-p99-" + job, "nvme", p),
                    "cost", "<=", 1.1, "ns")
                self.row("B1", f"ndkblk vs nvme-rdma, fio {job}, CPU time per I/O",
                         f"{p} B", ("B1-cpu-" + job, "ndkblk", p), ("B1-cpu-" + job, "nvme", p),
                         "cost", "info", 0, "ns")
            # Each variant against the nvme-rdma runs interleaved with it.
            for v, text in (("ndkblk-fr", "without inline writes (every write fast-registered)"),
                            ("ndkblk-mw", "in window mode (a window over a registered pool)"),
                            ("ndkblk-wq", "with notifications from ndk.ko's work item")):
                base = "nvme-" + v.split("-")[1]
                for p in self.params("B1-" + job, v):
                    iops = self.row("B1", f"ndkblk {text} vs nvme-rdma, fio {job}, IOPS",
                                    f"{p} B", ("B1-" + job, v, p), ("B1-" + job, base, p),
                                    "rate", "info", 0, "ns/IO")
                    if v != "ndkblk-wq":
                        continue
                    p99 = self.row("B1", f"ndkblk {text} vs nvme-rdma, fio {job}, p99 "
                                   "completion latency", f"{p} B",
                                   ("B1-p99-" + job, v, p), ("B1-p99-" + job, base, p),
                                   "cost", "info", 0, "ns")
                    # The A/B of direct_notify, each side over its own
                    # interleaved nvme-rdma runs (the variant runs later).
                    for what, a, b in (("IOPS", main.get(p), iops),
                                       ("p99", main.get(("p99", p)), p99)):
                        ok = a and b and a["ratio"] and b["ratio"]
                        self.scalar("B1", f"ndkblk direct over work-item notifications, "
                                    f"fio {job}, {what} (ratio of the two ratios to nvme-rdma)",
                                    f"{p} B", a["ratio"] / b["ratio"] if ok else None,
                                    "info", 0, "×")

    def build_u1(self):
        """U1: per size, ndk (MEM_REGISTER) vs verbs; fits of registration
        and deregistration for ndk and mr (MR_REGISTER) vs verbs over the
        sizes both registered; the pin floor and io_uring for reference."""
        ndk_sizes = self.params("U1-reg", "ndk")
        for m in ("U1-reg", "U1-dereg"):
            tag = "" if m == "U1-reg" else "dereg-"
            for v in ("ndk", "mr", "verbs", "uring", "kpin"):
                for scope, sizes in (("common", ndk_sizes), ("all", self.params(m, v))):
                    pts = [(p / 4096, self.get(m, v, p)["median"]) for p in sizes
                           if self.get(m, v, p)]
                    f = fit(pts)
                    if f:
                        self.fits[f"{tag}{v}-{scope}"] = f
        for p in ndk_sizes:
            self.row("U1", "MEM_REGISTER latency vs ibv_reg_mr", f"{p} B",
                     ("U1-reg", "ndk", p), ("U1-reg", "verbs", p), "cost", "<=", 1.0, "ns")
            self.row("U1", "MEM_DEREGISTER latency vs ibv_dereg_mr", f"{p} B",
                     ("U1-dereg", "ndk", p), ("U1-dereg", "verbs", p), "cost", "<=", 1.0, "ns")
        rng = f"{ndk_sizes[0]}..{ndk_sizes[-1]} B" if ndk_sizes else ""
        v, vd = self.fits.get("verbs-common"), self.fits.get("dereg-verbs-common")
        for ours, label in (("ndk", "MEM_REGISTER"), ("mr", "MR_REGISTER")):
            n, nd = self.fits.get(f"{ours}-common"), self.fits.get(f"dereg-{ours}-common")
            for what, a, b in (("registration", n, v), ("deregistration", nd, vd)):
                if not (a and b):
                    continue
                self.scalar("U1", f"{label} {what}: fitted per-page slope / verbs", rng,
                            a["slope_ns_per_page"] / b["slope_ns_per_page"]
                            if b["slope_ns_per_page"] > 0 else None, "<=", 1.0, "ratio",
                            "%.0f vs %.0f ns/page (stretch 0.8)" % (a["slope_ns_per_page"],
                                                                   b["slope_ns_per_page"]))
                self.scalar("U1", f"{label} {what}: fitted fixed cost / verbs", rng,
                            a["fixed_ns"] / b["fixed_ns"]
                            if b["fixed_ns"] > 0 and a["fixed_ns"] > 0 else None, "<=", 1.0,
                            "ratio", "%.1f vs %.1f us (stretch 0.8)" % (a["fixed_ns"] / 1e3,
                                                                       b["fixed_ns"] / 1e3))
        n, pin, uring = (self.fits.get(k) for k in ("ndk-common", "kpin-common",
                                                    "uring-common"))
        for name, a in (("MEM_REGISTER", n), ("ibv_reg_mr", v)):
            if a and pin and pin["slope_ns_per_page"] > 0:
                self.scalar("U1", f"per-page slope, {name} / pin-only floor (kernel pin)", rng,
                            a["slope_ns_per_page"] / pin["slope_ns_per_page"], "info", 0,
                            "ratio", "reference: %.0f vs %.0f ns/page" %
                            (a["slope_ns_per_page"], pin["slope_ns_per_page"]))
        if n and uring and uring["slope_ns_per_page"] > 0:
            self.scalar("U1", "per-page slope, MEM_REGISTER / io_uring buffer registration", rng,
                        n["slope_ns_per_page"] / uring["slope_ns_per_page"], "info", 0,
                        "ratio", "reference: %.0f vs %.0f ns/page" %
                        (n["slope_ns_per_page"], uring["slope_ns_per_page"]))

    def build_s1(self):
        counts = sorted({p for (m, v, p) in self.st if m == "S1-reg"})
        if not counts:
            return
        # Per count: every block's per-registration time.
        per = {}
        for c in counts:
            per[c] = self.get("S1-reg", "ndk", c)
        base = counts[0]
        for c in counts[1:]:
            self.row("S1", f"time per registration with {c} live vs {base}", f"n={c}",
                     ("S1-reg", "ndk", c), ("S1-reg", "ndk", base), "cost", "<=", 1.5, "ns")
            lim = 1.0 + math.log(c / base) / math.log(max(base, 2))
            self.row("S1", f"ibv_reg_mr time per registration with {c} live vs {base} "
                     "(the same growth without ndk.ko)", f"n={c}",
                     ("S1-reg", "verbs", c), ("S1-reg", "verbs", base), "cost", "info", 0, "ns")
            self.row("S1", f"repeat-registration lookup, {c} live vs {base}", f"n={c}",
                     ("S1-lookup", "ndk", c), ("S1-lookup", "ndk", base), "cost", "<=",
                     round(max(lim, 1.5), 2), "ns")
            self.row("S1", f"slab bytes per registration, {c} live vs {base}", f"n={c}",
                     ("S1-mem", "ndk", c), ("S1-mem", "ndk", base), "cost", "<=", 1.2,
                     "bytes")


# --- output --------------------------------------------------------------------------


def fmt(x, unit):
    if x is None:
        return "n/a"
    if unit in ("ns", "ns/pair", "ns/op", "ns/msg", "ns/IO"):
        if x >= 1e6:
            return f"{x / 1e6:.2f} ms"
        if x >= 1e3:
            return f"{x / 1e3:.1f} µs"
        return f"{x:.0f} ns"
    if unit == "bytes":
        return f"{x:.0f} B"
    return f"{x:.3g}"


def ratio_str(x):
    return "n/a" if x is None else f"{x:.3g}×" if x < 1000 else f"{x:.0f}×"


def markdown(rep, info, cond, fits, command):
    out = []
    out.append("| ID | measure | size | ours (median / p99) | baseline (median / p99) | "
               "ratio median | ratio p99 | CV ours | goal | met |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rep.rows:
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        if r.get("unsupported"):
            out.append(f"| {r['id']} | {r['what']} | {r['param']} | not supported by this "
                       f"build | | | | | {r['goal']} | — |")
            continue
        if "value" in r:
            v = "n/a" if r["value"] is None else (fmt(r["value"], r["unit"])
                                                  if r["unit"] != "ratio" else f"{r['value']:.3g}")
            out.append(f"| {r['id']} | {r['what']} | {r['param']} | {v} | {r.get('note', '')} "
                       f"| {ratio_str(r['value']) if r['unit'] == 'ratio' else v} | | | "
                       f"{r['goal']} | {met} |")
            continue
        o, b, u = r["ours"], r["baseline"], r["unit"]
        os_ = f"{fmt(o['median'], u)} / {fmt(o['p99'], u)}" if o else "n/a"
        bs = f"{fmt(b['median'], u)} / {fmt(b['p99'], u)}" if b else "n/a"
        cv = f"{o['cv'] * 100:.0f}%" if o else "n/a"
        out.append(f"| {r['id']} | {r['what']} | {r['param']} | {os_} | {bs} | "
                   f"{ratio_str(r['ratio'])} | {ratio_str(r['ratio_p99'])} | {cv} | "
                   f"{r['goal']} | {met} |")
    table = "\n".join(out)
    lines = ["# Benchmark results", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += ["Conditions: " + "; ".join(f"{k} {v}" for k, v in cond.items()), ""]
    lines += ["Ratios compare medians (and p99s) measured in the same guest boot, "
              "interleaved round by round. Throughput rows (F1, W1, D1, C1 miss/hit) give "
              "ours' rate over the baseline's (higher is better); cost rows give ours' time "
              "or bytes over the baseline's (lower is better).", ""]
    lines += [table, ""]
    m1 = [(v, info[f"m1_caches_{v}"]) for v in ("ndk", "verbs") if f"m1_caches_{v}" in info]
    if m1:
        lines += ["M1: the slab caches that grew most in round 0, bytes per registration "
                  "(the variant run second reuses objects the first freed; the medians above "
                  "alternate the order):", ""]
        lines += [f"- {v}: {c.replace(',', ', ')}" for v, c in m1] + [""]
    if fits:
        lines += ["U1 fits (t = fixed + slope × pages, relative weights; `dereg-` "
                  "deregistration; `common` the sizes MEM_REGISTER took, `all` every size "
                  "of the variant):", "",
                  "| variant | sizes | fixed | slope |", "|---|---|---|---|"]
        for k, f in sorted(fits.items()):
            lines.append(f"| {k.rsplit('-', 1)[0]} | {k.rsplit('-', 1)[1]} | "
                         f"{f['fixed_ns'] / 1e3:.1f} µs | {f['slope_ns_per_page']:.0f} ns/page |")
        lines.append("")
    return "\n".join(lines), table


def series(rep, m, v, scale=1.0):
    return [(p, rep.get(m, v, p)["median"] * scale, rep.get(m, v, p)["p99"] * scale)
            for p in rep.params(m, v)]


def plot(outdir, name, title, xlabel, ylabel, lines, logx=True, logy=False, bars=False,
         xbytes=False):
    """lines: [(label, [(x, y, y99)])]; writes name.png with gnuplot."""
    lines = [(lab, pts) for lab, pts in lines if pts]
    if not lines or not shutil.which("gnuplot"):
        return None
    dat = os.path.join(outdir, f"{name}.dat")
    with open(dat, "w") as f:
        for lab, pts in lines:
            f.write(f"# {lab}\n")
            for x, y, y99 in pts:
                f.write(f"{x} {y} {y99}\n")
            f.write("\n\n")
    gp = [f"set terminal pngcairo size 900,540 font 'Sans,10'",
          f"set output '{os.path.join(outdir, name + '.png')}'",
          f"set title \"{title}\"", f"set xlabel \"{xlabel}\"", f"set ylabel \"{ylabel}\"",
          "set grid", "set key top left"]
    if logx:
        gp.append("set logscale x 2")
    if xbytes:
        gp.append("set format x '%.0b %BB'")
    if logy:
        gp.append("set logscale y")
    if bars:
        gp += ["set style data histograms", "set style fill solid 0.7", "set boxwidth 0.8",
               "set xtics rotate by -30", "set yrange [0:*]", "unset logscale x",
               "set key top right"]
        parts = [f"'{dat}' index {i} using 2:xtic(1) title \"{lab}\""
                 for i, (lab, _) in enumerate(lines)]
    else:
        parts = []
        for i, (lab, _) in enumerate(lines):
            parts.append(f"'{dat}' index {i} using 1:2 with linespoints lw 2 lc {i + 1} "
                         f"title \"{lab} (median)\"")
            parts.append(f"'{dat}' index {i} using 1:3 with points pt 6 lc {i + 1} notitle")
    if not bars:
        gp.append("set label 1 'open circles: p99' at graph 0.99, graph 0.03 right")
    gp.append("plot " + ", ".join(parts))
    script = os.path.join(outdir, f"{name}.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", script], check=False, capture_output=True)
    return name + ".png" if os.path.exists(os.path.join(outdir, name + ".png")) else None


def ratio_plot(outdir, rep):
    """Goal attainment per row: ratio/goal (>=) or goal/ratio (<=); >= 1 meets it."""
    if not shutil.which("gnuplot"):
        return None
    dat = os.path.join(outdir, "ratios.dat")
    n = 0
    with open(dat, "w") as f:
        for r in rep.rows:
            if r["ratio"] is None or r["ratio"] <= 0 or r["goal"] == "info":
                continue
            op, goal = r["goal"].split()
            goal = float(goal)
            if goal <= 0:
                continue
            att = r["ratio"] / goal if op == ">=" else goal / r["ratio"]
            label = f"{r['id']} {r['param']}".replace('"', "")
            f.write(f"\"{label}\" {att:.4f}\n")
            n += 1
    if not n:
        return None
    gp = ["set terminal pngcairo size 1100,560 font 'Sans,9'",
          f"set output '{os.path.join(outdir, 'ratios.png')}'",
          "set title \"Goal attainment per measure (ratio vs goal; >= 1 meets the goal)\"",
          "set style fill solid 0.7", "set boxwidth 0.7", "set xtics rotate by -60",
          "set logscale y 2", "set grid y", "set ylabel \"attainment (log2)\"", "unset key",
          f"plot '{dat}' using 0:2:xtic(1) with boxes lc rgb '#3070b0', 1 with lines lw 2 "
          "lc rgb '#c03030'"]
    script = os.path.join(outdir, "ratios.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", script], check=False, capture_output=True)
    return "ratios.png" if os.path.exists(os.path.join(outdir, "ratios.png")) else None


def plots(outdir, rep):
    made = []
    us = 1e-3
    made.append(plot(outdir, "f1", "F1: fast-register + invalidate pairs per second",
                     "pages per registration", "pairs/s",
                     [(v, [(p, 1e9 / y, 1e9 / y99) for p, y, y99 in series(rep, "F1", v)])
                      for v in ("ndk", "raw", "raw-sig", "floor", "floor-locked",
                                "floor-lf")]))
    made.append(plot(outdir, "r1", "R1: kernel registration latency (MDL)", "pages",
                     "µs", [(f"{v} {m[3:]}", series(rep, m, v, us))
                            for m in ("R1-reg", "R1-dereg")
                            for v in ("ndk", "raw", "raw-alloc", "raw-bh", "raw-mdl")],
                     logy=True))
    made.append(plot(outdir, "u1", "U1: user registration latency (4 KiB pages)", "bytes",
                     "µs", [(v, series(rep, "U1-reg", v, us))
                            for v in ("ndk", "mr", "verbs", "uring", "kpin")],
                     logy=True, xbytes=True))
    made.append(plot(outdir, "c1", "C1: registration cache", "bytes", "µs",
                     [(v, series(rep, "C1", v, us)) for v in ("hit", "miss", "nocache")],
                     logy=True, xbytes=True))
    made.append(plot(outdir, "w1", "W1: window bind vs fast-register vs re-registration",
                     "pages of the sub-range", "µs per operation",
                     [(v, series(rep, "W1", v, us)) for v in ("bind", "fr", "rereg")],
                     logy=True))
    made.append(plot(outdir, "s1", "S1: live registrations", "live registrations", "µs",
                     [("per registration", series(rep, "S1-reg", "ndk", us)),
                      ("repeat lookup", series(rep, "S1-lookup", "ndk", us))], logy=True))
    made.append(ratio_plot(outdir, rep))
    return [m for m in made if m]


# --- check mode -------------------------------------------------------------------------

EXPECTED = [
    ("F1", "ndk"), ("F1", "raw"), ("F1", "raw-sig"), ("F1", "floor"), ("F1", "floor-locked"), ("F1", "floor-lf"),
    ("F1-cal", "call"), ("R1-reg", "ndk"), ("R1-reg", "raw"), ("R1-reg", "raw-alloc"),
    ("R1-dereg", "ndk"), ("R1-dereg", "raw"), ("W1", "bind"), ("W1", "fr"), ("W1", "rereg"),
    ("D1-write", "ndk-k"), ("D1-write", "perftest"), ("D1-read", "ndk-k"), ("D1-write", "raw"),
    ("D1-read", "raw"), ("D1-read", "floor-lf"),
    ("D1-read", "perftest"), ("D1-write", "ndk-u"), ("D1-read", "ndk-u"), ("C1-lib", "hit"),
    ("U1-reg", "ndk"), ("U1-reg", "verbs"), ("U1-reg", "uring"), ("U1-reg", "kpin"),
    ("U1-reg", "mr"), ("U1-dereg", "mr"), ("U1-dereg", "ndk"), ("U1-dereg", "verbs"), ("C1", "hit"), ("C1", "miss"),
    ("C1", "nocache"), ("M1", "ndk"), ("M1", "verbs"), ("S1-reg", "ndk"),
    ("S1-reg", "verbs"), ("S1-lookup", "ndk"), ("S1-mem", "ndk"),
    ("B1-randread-qd1", "ndkblk"), ("B1-randread-qd1", "nvme"), ("B1-write-qd4", "ndkblk"),
    ("B1-write-qd4", "nvme"), ("B1-randwrite-qd1", "ndkblk-fr"), ("B1-read-qd16", "ndkblk-mw"),
]


def measure_id(m):
    """F1, R1-reg, C1-lib, ... -> f1, r1, c1."""
    return m.split("-")[0].lower()


def check(rep, errors, only=None):
    bad = list(errors)
    for m, v in EXPECTED:
        if only and measure_id(m) not in only:
            continue
        ps = rep.params(m, v)
        if not ps:
            bad.append(f"{m} {v}: no sample")
        for p in ps:
            s = rep.get(m, v, p)
            if not (s and math.isfinite(s["median"]) and math.isfinite(s["p99"])):
                bad.append(f"{m} {v} {p}: not a finite number")
    if (not only or "c1" in only) and "C1-stale-hits" not in rep.values:
        bad.append("C1 churn: no stale-hit count")
    for r in rep.rows:
        if "value" in r or r["goal"] == "info":  # fits (inputs checked above), host rows,
            # and sizes this build does not support
            continue
        if r["ratio"] is None or not math.isfinite(r["ratio"]):
            bad.append(f"{r['id']} {r['what']} {r['param']}: no ratio")
    for k, f in rep.fits.items():
        if not all(math.isfinite(x) for x in (f["fixed_ns"], f["slope_ns_per_page"])):
            bad.append(f"U1 fit {k}: not finite")
    return bad


def ab_report(raw, out, command):
    """scripts/bench-ab.sh: every ratio of each load of module A and B
    (raw/A1, raw/B1, ...), and its median per module."""
    ratios = defaultdict(lambda: {"A": [], "B": []})  # (id, what, param) -> loads
    errors = []
    for d in sorted(glob.glob(os.path.join(raw, "[AB][0-9]*"))):
        mod = os.path.basename(d)[0]
        samples, values, info, errs, _, unsupported = load(d)
        errors += [f"{os.path.basename(d)}: {e}" for e in errs]
        rep = Report(samples, values, info, unsupported)
        rep.build()
        for r in rep.rows:
            if r["ratio"] is not None and r["id"] in ("F1", "D1"):
                ratios[(r["id"], r["what"], r["param"])][mod].append(r["ratio"])
    if not ratios:
        errors.append("no load gave a ratio")
    lines = [f"# Module A/B: `{command}`", "",
             "Each load's ratio of the medians; per module the median over its loads, "
             "and B's median over A's.", "",
             "| measure | what | param | A loads | B loads | A | B | B/A |",
             "|---|---|---|---|---|---|---|---|"]
    for (mid, what, param), by in ratios.items():
        a = stats(by["A"])["median"] if by["A"] else None
        b = stats(by["B"])["median"] if by["B"] else None
        loads = [" ".join(f"{x:.3f}" for x in by[m]) for m in "AB"]
        lines.append(f"| {mid} | {what} | {param} | {loads[0]} | {loads[1]} | "
                     f"{ratio_str(a)} | {ratio_str(b)} | {ratio_str(b / a if a and b else None)} |")
    md = "\n".join(lines) + "\n"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "ab.md"), "w") as f:
        f.write(md)
    print(md)
    if errors:
        print("bench-report: errors:\n  " + "\n  ".join(errors))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw")
    ap.add_argument("--ab", metavar="RAW", help="scripts/bench-ab.sh's results instead")
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--command", default="")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    if args.ab:
        return ab_report(args.ab, args.out, args.command)
    if not args.raw:
        ap.error("--raw or --ab is required")
    samples, values, info, errors, ran, unsupported = load(args.raw)
    only = {x for x in args.only.split(",") if x}
    cond = {}
    cpath = os.path.join(args.raw, "conditions.txt")
    if os.path.exists(cpath):
        for line in open(cpath):
            f = line.split(None, 2)
            if len(f) == 3 and f[0] == "I":
                cond[f[1]] = f[2].strip()
    for k in ("page_backing", "frmr_page_count", "max_registration_size",
              "max_user_registration_size"):
        if k in info:
            cond[k] = info[k]
    cond["emulation"] = os.environ.get("NDK_BENCH_EMULATION", "QEMU TCG (software emulation)")
    rep = Report(samples, values, info, unsupported)
    rep.build()
    os.makedirs(args.out, exist_ok=True)
    md, table = markdown(rep, info, cond, rep.fits, args.command)
    pngs = plots(args.out, rep)
    md += "\nPlots: " + ", ".join(pngs) + "\n" if pngs else ""
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    doc = {"command": args.command, "conditions": cond, "values": values, "fits": rep.fits,
           "errors": errors, "plots": pngs, "unsupported": unsupported,
           "rows": [{k: v for k, v in r.items()} for r in rep.rows],
           "stats": [{"measure": m, "variant": v, "param": p, **s}
                     for (m, v, p), s in sorted(rep.st.items())]}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(md)
    if errors:
        print("errors:\n  " + "\n  ".join(errors))
    if args.check:
        bad = check(rep, errors, only)
        if bad:
            print("bench-report: check FAILED:\n  " + "\n  ".join(bad))
            return 1
        print(f"bench-report: check passed: {len(rep.st)} series, {len(rep.rows)} ratios, "
              f"all finite; plots: {', '.join(pngs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
