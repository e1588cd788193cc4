"""BenchExec tool-info module of apc (`docs/benchexec.md`).

Give it to BenchExec by its full name, `apc_toolinfo.apc`, with
`tests/benchexec` on PYTHONPATH.
"""

import json
import os

import benchexec.result as result
import benchexec.tools.template
from benchexec.tools.template import UnsupportedFeatureException

# The commands whose JSON this module reads; the first option of a
# benchmark definition may name one, `check` is the default.
_COMMANDS = ("check", "explore")

# apc's exit statuses that come without a report (docs/cli.md).
_EXIT_ERRORS = {2: "ERROR (bad input)", 70: "ERROR (internal error)"}


class Tool(benchexec.tools.template.BaseTool2):
    """
    apc decides whether a run of a microc program can reach a target: an
    `assert`, or a place where a run fails (division by zero, null
    dereference, out-of-bounds index, read of an unassigned variable).

    Property: unreach-call, read as "no target is reachable". A reachable
    target comes with a witness apc has replayed (false(unreach-call)),
    `true` is a proof for every target, anything else is `unknown`; the
    reason of an `unknown` is the statistic `reason`.

    Options of the benchmark definition: the first one may name the
    command, `check` (default) or `explore`; the others go to it as given.
    The module adds `--format json` and reads the JSON report.

    Options of a task (its task-definition file):
      target: LINE:COL, or a list of them: the task is about the targets at
              that place only (`apc check --target`, `apc explore --guided`,
              which takes one place holding one target);
      language: `microc` if given.
    """

    def executable(self, tool_locator):
        # The tool directory is a checkout with its release build, or (for
        # a CARGO_TARGET_DIR elsewhere, or an installed apc) the binary's
        # own directory.
        try:
            return tool_locator.find_executable("apc", subdir="target/release")
        except benchexec.tools.template.ToolNotFoundException:
            return tool_locator.find_executable("apc")

    def name(self):
        return "apc"

    def version(self, executable):
        # `apc --version` prints `apc 0.1.0`; BenchExec wants the number.
        return self._version_from_tool(executable, line_prefix="apc ")

    def program_files(self, executable):
        # The pinned Horn-clause Z3 lives in solvers/bin when installed; the
        # other solvers are the machine's own (solvers/install.sh).
        return [executable] + self._program_files_from_executable(
            executable, ["../../solvers/bin"]
        )

    def cmdline(self, executable, options, task, rlimits):
        options = list(options)
        command = options.pop(0) if options and options[0] in _COMMANDS else "check"
        if any(o == "--format" or o.startswith("--format=") for o in options):
            raise UnsupportedFeatureException(
                "the module reads apc's JSON report: leave --format out"
            )
        if (
            task.property_file
            and os.path.basename(task.property_file) != "unreach-call.prp"
        ):
            raise UnsupportedFeatureException(
                "apc checks one property, unreach-call.prp, not "
                + os.path.basename(task.property_file)
            )
        places = _task_places(task.options)
        if command == "check":
            chosen = [flag for place in places for flag in ("--target", place)]
        elif len(places) > 1:
            raise UnsupportedFeatureException(
                "apc explore is guided to one place, not " + ", ".join(places)
            )
        else:
            chosen = ["--guided", places[0]] if places else []
        return [
            executable,
            command,
            task.single_input_file,
            *options,
            *chosen,
            "--format",
            "json",
        ]

    def determine_result(self, run):
        report = _report(run.output)
        if report is None:
            # A signal, a limit or an exit status without a report: plain
            # ERROR lets BenchExec name the signal or the status itself.
            return _EXIT_ERRORS.get(run.exit_code.value, result.RESULT_ERROR)
        verdict = _verdict(report)
        if verdict is None:
            return "ERROR (unexpected report)"
        return verdict[0]

    def get_value_from_output(self, output, identifier):
        report = _report(output)
        if report is None:
            return None
        if identifier == "reason":
            verdict = _verdict(report)
            return (verdict[1] or "") if verdict else None
        if identifier == "engines" and isinstance(report.get("targets"), list):
            counts = {}
            for t in report["targets"]:
                if isinstance(t, dict) and t.get("engine"):
                    counts[t["engine"]] = counts.get(t["engine"], 0) + 1
            return ", ".join(f"{e} {n}" for e, n in sorted(counts.items())) or None
        for part in ("summary", "stats"):
            value = report.get(part)
            if isinstance(value, dict) and _scalar(value.get(identifier)):
                return str(value[identifier])
        value = report.get(identifier)
        return str(value) if _scalar(value) else None


def _scalar(value):
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


def _task_places(options):
    """The places a task is about (its `target` option), checked."""
    if options is None:
        return []
    if not isinstance(options, dict):
        raise UnsupportedFeatureException("task options must be a mapping")
    language = options.get("language", "microc")
    if str(language).lower() != "microc":
        raise UnsupportedFeatureException(f"apc reads microc, not {language}")
    target = options.get("target")
    places = [] if target is None else target if isinstance(target, list) else [target]
    for place in places:
        parts = str(place).split(":")
        if not (1 <= len(parts) <= 2 and all(p.isdigit() for p in parts)):
            raise UnsupportedFeatureException(f"target {place!r} is not LINE[:COL]")
    return [str(p) for p in places]


def _report(output):
    """apc's JSON report in the run's output, or None.

    The output holds stderr too (notes, diagnostics); apc prints its report
    as one pretty-printed object whose first and last lines are `{` and `}`
    and whose other lines are indented.
    """
    lines = [line.rstrip("\r\n") for line in output]
    starts = [i for i, line in enumerate(lines) if line == "{"]
    ends = [i for i, line in enumerate(lines) if line == "}"]
    for s in reversed(starts):
        for e in reversed(ends):
            if e <= s:
                break
            chunk = lines[s : e + 1]
            # A line of stderr may have landed inside the report.
            indented = [line for line in chunk if line in ("{", "}") or line[:1] == " "]
            for candidate in (chunk, indented):
                try:
                    value = json.loads("\n".join(candidate))
                except ValueError:
                    continue
                if isinstance(value, dict):
                    return value
    return None


def _verdict(report):
    """(BenchExec result, reason of an unknown) of a report, or None."""
    if isinstance(report.get("targets"), list):
        targets = [t for t in report["targets"] if isinstance(t, dict)]
        verdicts = [t.get("verdict") for t in targets]
        if "reachable" in verdicts:
            return result.RESULT_FALSE_REACH, None
        # No targets at all: nothing can be reached, the property holds.
        if all(v == "unreachable" for v in verdicts):
            return result.RESULT_TRUE_PROP, None
        reasons = [t.get("reason") for t in targets if t.get("verdict") != "unreachable"]
        return result.RESULT_UNKNOWN, _reason_class(next(iter(reasons), None))
    if isinstance(report.get("errors"), list) and "end" in report:
        goal = report.get("guided")
        errors = [e for e in report["errors"] if isinstance(e, dict)]
        if goal:
            # A guided run records the other errors it meets, too.
            errors = [e for e in errors if _at(e, str(goal))]
        if errors:
            return result.RESULT_FALSE_REACH, None
        if report["end"] == "complete":
            return result.RESULT_TRUE_PROP, None
        return result.RESULT_UNKNOWN, _reason_class(report.get("reason") or report["end"])
    return None


def _at(error, place):
    line, _, col = place.partition(":")
    return str(error.get("line")) == line and (not col or str(error.get("col")) == col)


def _reason_class(reason):
    """The kind of a reason, for tables: `nc-sat-no-witness: the replay
    returned 0` is `nc-sat-no-witness`, `3 paths not decided (…)` is
    `paths not decided`."""
    if not isinstance(reason, str) or not reason.strip():
        return "unknown"
    head = reason.split(":", 1)[0].split(" (", 1)[0].strip()
    words = head.split()
    if len(words) > 1 and words[0].isdigit():
        head = " ".join(words[1:])
    return head or "unknown"
