"""`gradviz run`: load, run every op once (its checks inside it), compare, print and write."""

from __future__ import annotations

import os
import sys
import threading

from gradviz.cli.run_flags import joined_range, run_parser, settings_from
from gradviz.cli.usage import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STRICT,
    EXIT_USAGE,
    UsageError,
    chosen_frameworks,
    files_or_examples,
)
from gradviz.vocab import CheckStatus


def cmd_run(argv: list[str]) -> int:
    from gradviz.cli.output import print_load_errors, print_load_notes, print_results

    args = run_parser().parse_args(joined_range(argv))
    settings = settings_from(args)
    frameworks = chosen_frameworks(args.framework)
    files = files_or_examples(args.files)
    from gradviz.cli.outputs import output_problems

    wrong = output_problems(
        [("--json", args.json), ("--npz", args.npz), ("--plot", args.plot)], files
    )
    if wrong:
        raise UsageError("gradviz run: " + "\n".join(wrong))

    from gradviz.catalog import label_results, pair_ops, requests_for, select
    from gradviz.cli.warm_up import WarmUp
    from gradviz.engine import Engine

    if args.verbose:  # TensorFlow's informational lines too, unless the user chose a level
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
    from gradviz.cli import early_start

    with (
        WarmUp(plot=bool(args.plot)) as warm_up,
        Engine(
            frameworks,
            start=False,
            on_state=warm_up.on_state,
            workers=early_start.taken(frameworks),
        ) as engine,
    ):
        if args.verbose:
            engine.follow_output(_echo_worker_line)
        # only the workers some file imports: an unused framework's import (JAX's, next to the
        # torch and TF files a user names) took a core from the others for nothing
        engine.start(early_start.used_by(files, frameworks))
        from gradviz.cli.run_stream import HeldEvents, InBackground, OpsAsLoaded

        # one FULL pass (each op as asked, its checks inside it); a framework's ops start as
        # soon as its own files are loaded (cli.run_stream)
        ops, events = OpsAsLoaded(frameworks, args.op, settings), HeldEvents()
        running = InBackground(
            lambda: engine.run_streams({fw: ops.stream(fw) for fw in frameworks}, events),
            name="gradviz-run",
        )
        try:
            catalogs = engine.load(files, timeout=settings.timeout, on_loaded=ops.loaded)
            load_failed = print_load_errors(catalogs)
            print_load_notes(catalogs)
            paired = pair_ops(catalogs)
            chosen, missing = select(paired, args.op)
            for name in missing:
                print(f"gradviz: no op named {name!r} in the given files", file=sys.stderr)
            requests = requests_for(chosen, frameworks, settings)
            ops.all_loaded(requests)
        finally:
            ops.all_loaded([])  # only where loading failed: the streams end
        if not requests:
            running.result()
            from gradviz.cli.output import print_left_out, print_skipped
            from gradviz.cli.report_files import write_load_report

            print_skipped(catalogs, sys.stderr)
            print_left_out(files, catalogs, frameworks, sys.stderr)
            # a report is complete on its own: the files that could not load are in it
            write_load_report(args, settings, [cat for cat in catalogs if cat.error is not None])
            print(
                "gradviz: nothing to run: no ops found"
                + (" (see the errors above)" if load_failed else ""),
                file=sys.stderr,
            )
            return EXIT_USAGE
        events.release(None if args.quiet else _progress(len(requests)))
        results = label_results(paired, ops.in_order(running.result()))
        # the workers are killed and reaped (~0.1 s: TensorFlow's takes a while to go) while the
        # results are compared and written; leaving the block then finds them stopped
        closing = threading.Thread(target=engine.close, name="gradviz-close")
        closing.start()
        warm_up.join()  # its imports are done before this thread imports
        # the app's analysis: the verdicts and diagnostics the window shows for the same results
        from gradviz.app.analysis import analyze
        from gradviz.app.parity_rows import parity_in_order, with_parity

        analyses = with_parity([analyze(r, curves=False) for r in results])
        for a in analyses:
            if a.problem:  # a bug in gradviz's comparison: say so, loudly
                raise RuntimeError(f"comparing {a.result.name} ({a.result.framework}): {a.problem}")
        comparisons = [a.comparison for a in analyses]
        failed_files = [cat for cat in catalogs if cat.error is not None]
        written = print_results(
            results,
            comparisons,
            settings,
            args,
            load_errors=failed_files,
            diagnostics=[list(a.findings) for a in analyses],
            flows=[a.flow for a in analyses],
            parity_rows=parity_in_order(analyses),
        )
    closing.join()
    if written != EXIT_OK:  # a report file could not be written
        return written
    if load_failed or missing:
        return EXIT_USAGE
    return exit_code(results, comparisons, args.strict)


def _echo_worker_line(framework: str, line: str) -> None:
    print(f"[{framework} worker] {line}", file=sys.stderr, flush=True)


def _progress(total: int):
    """The run's events to stderr: a line per op's final result."""
    from gradviz.engine.passes import ResultArrived

    done = [0]

    def report(event) -> None:
        if not isinstance(event, ResultArrived) or event.partial:
            return
        result = event.result
        done[0] += 1
        mark = "ok" if result.status == "ok" else result.error.kind if result.error else "error"
        print(
            f"[{done[0]}/{total}] {result.framework:5} {result.name} ({mark}, "
            f"{result.elapsed:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    return report


def exit_code(results, comparisons, strict: bool) -> int:
    if any(r.status != "ok" for r in results):
        return EXIT_FAILED
    # a verdict the op declares it is meant to get (@gradviz.op(expect=...): a gradient
    # reversal's differs) is not a failure
    if strict and any(
        t.verdict in ("differs", "non-finite")
        and t.verdict not in (r.op.expect if r.op is not None else ())
        for r, c in zip(results, comparisons)
        for t in c.tensors
    ):
        return EXIT_STRICT
    if strict and any(c.status == CheckStatus.FAIL for r in results for c in r.checks):
        return EXIT_STRICT
    return EXIT_OK
