"""The report of one run: report.md for people, report.json for tools, PNG plots.

report.json has at least (issue 13): {"target", "scenarios": [{"name", "passed", "skipped",
"checks", "failures": [...]}], "plots": [relative PNG paths], "conformance": {"cases", "ok",
"non_strict", "informational", "failed"}}.
"""

from __future__ import annotations

import json
import os

QUALITY_LEVEL = {"none": 0, "autonomous": 1, "dgps": 2, "float": 3, "fixed": 4}


class Report:
    def __init__(self, directory: str, target: str):
        self.directory = directory
        self.target = target
        self.scenarios: list[dict] = []
        self.plots: list[str] = []
        self.figures: dict = {}
        self.conformance = {"cases": 0, "ok": 0, "non_strict": 0, "informational": 0, "failed": 0}
        self.notes: list[str] = []
        os.makedirs(directory, exist_ok=True)

    def add(self, name: str, checks: list, skipped: str | None = None, seconds: float = 0.0, figures=None,
            notes: list | None = None):
        """`notes`: what the reader must know to read the checks (e.g. what gpsd cannot report)."""
        failures = [f"{c.name}: {c.detail}" for c in checks if not c.passed and not c.skipped]
        self.scenarios.append({
            "name": name,
            "passed": skipped is None and not failures,
            "skipped": skipped is not None,
            "skip_reason": skipped,
            "checks": len(checks),
            "failures": failures,
            "details": [{"name": c.name, "passed": c.passed, "skipped": c.skipped, "detail": c.detail} for c in checks],
            "seconds": round(seconds, 1),
            "figures": figures or {},
            "notes": list(notes or []),
        })

    @property
    def passed(self) -> bool:
        return all(s["passed"] or s["skipped"] for s in self.scenarios) and self.conformance["failed"] == 0

    # --- plots -----------------------------------------------------------------------------------
    def plot(self, latency_ms: list, quality_series: list, truth_quality: list, arrivals: list, reconnects: dict):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        def save(figure, name):
            path = os.path.join(self.directory, name)
            figure.tight_layout()
            figure.savefig(path, dpi=100)
            plt.close(figure)
            self.plots.append(name)

        if latency_ms:
            figure, axes = plt.subplots(figsize=(7, 3.5))
            axes.hist(latency_ms, bins=60, color="#3465a4")
            axes.set_xlabel("receiver write → client receive (ms)")
            axes.set_ylabel("epochs")
            axes.set_title(f"Epoch-to-client latency, V2 ({len(latency_ms)} epochs)")
            save(figure, "latency.png")
        if quality_series or truth_quality:
            figure, axes = plt.subplots(figsize=(7, 3.5))
            if truth_quality:
                axes.step([t for t, _ in truth_quality], [QUALITY_LEVEL[q] for _, q in truth_quality],
                          where="post", label="receiver wrote", color="#999999", linewidth=3)
            if quality_series:
                axes.plot([t for t, _ in quality_series], [QUALITY_LEVEL[q] for _, q in quality_series], ".",
                          markersize=3, label="client received", color="#cc0000")
            axes.set_yticks(list(QUALITY_LEVEL.values()), list(QUALITY_LEVEL.keys()))
            axes.set_xlabel("seconds")
            axes.set_title("Fix quality over time (rtk-cold-start)")
            axes.legend(loc="lower right")
            save(figure, "fix-quality.png")
        if arrivals:
            figure, axes = plt.subplots(figsize=(7, 3.5))
            end = int(max(arrivals)) + 1
            counts = [0] * end
            for a in arrivals:
                counts[min(int(a), end - 1)] += 1
            axes.plot(range(end), counts, drawstyle="steps-post", color="#3465a4")
            axes.set_xlabel("seconds")
            axes.set_ylabel("epochs per second")
            axes.set_title("Epoch rate at the client over time (rate-change)")
            save(figure, "epoch-rate.png")
        if reconnects:
            figure, axes = plt.subplots(figsize=(7, 3.5))
            names = list(reconnects)
            axes.barh(names, [reconnects[n] for n in names], color="#4e9a06")
            axes.set_xlabel("seconds until positions flow again")
            axes.set_title("Reconnect times")
            save(figure, "reconnect.png")

    # --- files -----------------------------------------------------------------------------------
    def write(self, started: str, finished: str, environment: dict):
        document = {"target": self.target, "started": started, "finished": finished, "passed": self.passed,
                    "environment": environment, "scenarios": self.scenarios, "plots": self.plots,
                    "conformance": self.conformance, "figures": self.figures, "notes": self.notes}
        with open(os.path.join(self.directory, "report.json"), "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, sort_keys=True)
            handle.write("\n")
        lines = [f"# tmm-bridge hardware-in-the-loop report: {self.target}", "",
                 f"- started {started}, finished {finished}",
                 *[f"- {k}: {v}" for k, v in environment.items()],
                 f"- result: **{'PASSED' if self.passed else 'FAILED'}**", "",
                 "| scenario | result | checks | seconds |", "|---|---|---:|---:|"]
        for s in self.scenarios:
            result = f"skipped: {s['skip_reason']}" if s["skipped"] else ("passed" if s["passed"] else "**FAILED**")
            lines.append(f"| {s['name']} | {result} | {s['checks']} | {s['seconds']} |")
        c = self.conformance
        if c["cases"]:
            lines += ["", f"WebSocket conformance: {c['cases']} cases, {c['ok']} OK, {c['non_strict']} non-strict, "
                          f"{c['informational']} informational, {c['failed']} failed (conformance/index.md)."]
        for s in self.scenarios:
            lines += ["", f"## {s['name']}", ""]
            if s["skipped"]:
                lines.append(f"Skipped: {s['skip_reason']}.")
                continue
            for d in s["details"]:
                mark = "skipped" if d["skipped"] else ("ok" if d["passed"] else "FAIL")
                lines.append(f"- {mark}: {d['name']}" + (f" — {d['detail']}" if d["detail"] else ""))
            lines += [f"- note: {n}" for n in s["notes"]]
        if self.figures:
            lines += ["", "## Figures", ""] + [f"- {k}: {v}" for k, v in sorted(self.figures.items())]
        if self.plots:
            lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in self.plots]
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        with open(os.path.join(self.directory, "report.md"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
