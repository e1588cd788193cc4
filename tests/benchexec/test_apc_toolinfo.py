"""Unit tests of the tool-info module on made-up runs (no apc needed).

    PYTHONPATH=tests/benchexec python3 -m unittest tests/benchexec/test_apc_toolinfo.py

run-tool-info-test.sh runs them with BenchExec installed; they are not part
of `cargo test`.
"""

import json
import unittest

import benchexec.result as result
from benchexec.tools.template import BaseTool2, UnsupportedFeatureException
from benchexec.util import ProcessExitCode

from apc_toolinfo.apc import Tool


def output(text):
    return BaseTool2.RunOutput([line + "\n" for line in text.splitlines()])


def run(text, code=None, signal=None, cmd=("apc", "check", "x.mc")):
    if signal is not None:
        exit_code = ProcessExitCode.create(signal=signal)
    else:
        exit_code = ProcessExitCode.create(value=code or 0)
    return BaseTool2.Run(list(cmd), exit_code, output(text), None)


def check_report(*verdicts, reasons=None):
    targets = []
    for i, v in enumerate(verdicts):
        targets.append(
            {
                "kind": "assert",
                "function": "main",
                "line": 10 + i,
                "col": 5,
                "verdict": v,
                "reason": (reasons or {}).get(i) if v == "unknown" else None,
                "witness": {"args": {}, "input": [1]} if v == "reachable" else None,
                "engine": "nc" if v != "unknown" else None,
                "method": None,
                "solver": "z3",
                "time_ms": 1.5,
            }
        )
    counts = {v: verdicts.count(v) for v in ("unreachable", "reachable", "unknown")}
    return json.dumps(
        {
            "file": "x.mc",
            "solver": "z3",
            "targets": targets,
            "summary": {"targets": len(verdicts), **counts},
            "time_ms": 3.0,
        },
        indent=2,
    )


def explore_report(end, errors=(), reason=None, guided=None):
    errs = [
        {"kind": "div-by-zero", "function": "main", "line": l, "col": c,
         "witness": {"args": {}, "input": [2]}, "found_after_ms": 1.0}
        for (l, c) in errors
    ]
    return json.dumps(
        {
            "file": "x.mc", "strategy": "bfs", "merging": "none",
            "summarization": False, "end": end, "reason": reason,
            "errors": errs, "first_error": errs[0] if errs else None,
            "stats": {"paths": 2, "queries": 8, "steps": 46, "undecided_reasons": []},
            "guided": guided, "guide_note": None, "subsumption": None,
            "annotations": [], "time_ms": 25.3,
        },
        indent=2,
    )


class DetermineResult(unittest.TestCase):
    tool = Tool()

    def result(self, *args, **kwargs):
        return self.tool.determine_result(run(*args, **kwargs))

    def test_check_verdicts(self):
        self.assertEqual(self.result(check_report("unreachable", "reachable"), 1),
                         result.RESULT_FALSE_REACH)
        self.assertEqual(self.result(check_report("unreachable", "unreachable")),
                         result.RESULT_TRUE_PROP)
        self.assertEqual(self.result(check_report()), result.RESULT_TRUE_PROP)
        # A reachable target decides, whatever the others say.
        self.assertEqual(self.result(check_report("unknown", "reachable"), 1),
                         result.RESULT_FALSE_REACH)

    def test_unknown_keeps_its_reason_as_a_statistic(self):
        text = check_report("unreachable", "unknown",
                            reasons={1: "nc-sat-no-witness: the replay returned 0"})
        # Plain "unknown", so that tables count it as unknown, not as an error.
        self.assertEqual(self.result(text, 3), result.RESULT_UNKNOWN)
        self.assertEqual(self.tool.get_value_from_output(output(text), "reason"),
                         "nc-sat-no-witness")
        self.assertEqual(self.tool.get_value_from_output(output(text), "unknown"), "1")
        self.assertEqual(self.tool.get_value_from_output(output(text), "engines"), "nc 1")
        text = check_report("unknown", reasons={0: "timeout: solving"})
        self.assertEqual(self.tool.get_value_from_output(output(text), "reason"), "timeout")

    def test_explore_verdicts(self):
        self.assertEqual(self.result(explore_report("error-found", [(19, 14)]), 1),
                         result.RESULT_FALSE_REACH)
        self.assertEqual(self.result(explore_report("complete")), result.RESULT_TRUE_PROP)
        text = explore_report("incomplete", reason="step limit (1000000)")
        self.assertEqual(self.result(text, 3), result.RESULT_UNKNOWN)
        self.assertEqual(self.tool.get_value_from_output(output(text), "reason"), "step limit")
        self.assertEqual(self.tool.get_value_from_output(output(text), "paths"), "2")
        text = explore_report("incomplete", reason="3 paths not decided (unknown)")
        self.assertEqual(self.tool.get_value_from_output(output(text), "reason"),
                         "paths not decided")

    def test_guided_explore_looks_at_its_goal_only(self):
        other = explore_report("complete", [(7, 4)], guided="8:11")
        self.assertEqual(self.result(other), result.RESULT_TRUE_PROP)
        goal = explore_report("error-found", [(7, 4), (8, 11)], guided="8:11")
        self.assertEqual(self.result(goal, 1), result.RESULT_FALSE_REACH)
        line_only = explore_report("error-found", [(8, 11)], guided="8")
        self.assertEqual(self.result(line_only, 1), result.RESULT_FALSE_REACH)

    def test_stderr_around_and_inside_the_report(self):
        text = check_report("reachable")
        lines = text.splitlines()
        mixed = "note: a note first\n" + "\n".join(
            lines[:3] + ["warning: a line of stderr in between"] + lines[3:]
        ) + "\nnote: and one after"
        self.assertEqual(self.result(mixed, 1), result.RESULT_FALSE_REACH)

    def test_failures_without_a_report(self):
        self.assertEqual(self.result(""), result.RESULT_ERROR)
        self.assertEqual(self.result("error: cannot read x.mc", 2), "ERROR (bad input)")
        self.assertEqual(self.result("thread panicked", 70), "ERROR (internal error)")
        truncated = "\n".join(check_report("unreachable").splitlines()[:6])
        self.assertEqual(self.result(truncated, signal=9), result.RESULT_ERROR)
        self.assertEqual(self.result("{\n  \"what\": 1\n}"), "ERROR (unexpected report)")
        self.assertEqual(self.result("[\n]\n{\n  nonsense\n}"), result.RESULT_ERROR)
        self.assertIsNone(self.tool.get_value_from_output(output("garbage"), "reason"))
        self.assertIsNone(self.tool.get_value_from_output(output(""), "targets"))


class Cmdline(unittest.TestCase):
    tool = Tool()
    limits = BaseTool2.ResourceLimits()

    def cmdline(self, options, prop="tests/benchexec/unreach-call.prp", task_options=None):
        task = BaseTool2.Task.with_files(["p.mc"], property_file=prop, options=task_options)
        return self.tool.cmdline("apc", options, task, self.limits)

    def test_commands_and_options(self):
        self.assertEqual(self.cmdline([]), ["apc", "check", "p.mc", "--format", "json"])
        self.assertEqual(
            self.cmdline(["explore", "--subsumption"]),
            ["apc", "explore", "p.mc", "--subsumption", "--format", "json"],
        )
        self.assertEqual(self.cmdline(["--solver", "cvc5"], prop=None)[:2], ["apc", "check"])

    def test_task_target(self):
        opts = {"language": "microc", "target": "12:5"}
        self.assertEqual(
            self.cmdline(["check"], task_options=opts),
            ["apc", "check", "p.mc", "--target", "12:5", "--format", "json"],
        )
        self.assertEqual(
            self.cmdline(["explore"], task_options=opts),
            ["apc", "explore", "p.mc", "--guided", "12:5", "--format", "json"],
        )
        two = {"target": ["12:5", "14"]}
        self.assertEqual(self.cmdline([], task_options=two)[3:7],
                         ["--target", "12:5", "--target", "14"])
        with self.assertRaises(UnsupportedFeatureException):
            self.cmdline(["explore"], task_options=two)
        with self.assertRaises(UnsupportedFeatureException):
            self.cmdline([], task_options={"target": "main"})

    def test_refusals(self):
        with self.assertRaises(UnsupportedFeatureException):
            self.cmdline(["--format", "text"])
        with self.assertRaises(UnsupportedFeatureException):
            self.cmdline([], prop="termination.prp")
        with self.assertRaises(UnsupportedFeatureException):
            self.cmdline([], task_options={"language": "C", "data_model": "ILP32"})


if __name__ == "__main__":
    unittest.main()
