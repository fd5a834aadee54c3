"""``skewlab run``'s savepoint and failure options (a helper module, not a command).

``--savepoint-at N --resume-parallelism P`` stops the job after source record N with a
savepoint and resumes it at parallelism P; ``--from-savepoint PATH [--resume-parallelism P]``
resumes a kept savepoint (checked whole, and bound to its views and parameters, before the job);
``--checkpoint-interval C --fail-at F`` checkpoints every C records per source subtask and fails
the subtask reading source record F once.
"""

from __future__ import annotations

import argparse
import json

from skewlab.engine.recovery import IN_FLIGHT_POLICIES

__all__ = [
    "EXAMPLES",
    "add_recovery_options",
    "recovery_flags",
    "recovery_requested",
    "run_with_recovery",
]

EXAMPLES = """\
  skewlab run naive --views 20000 --parallelism 3 --savepoint-at 10000 --resume-parallelism 4
  skewlab run buffered --savepoint-at 5000 --resume-parallelism 2 --in-flight keyed_state
  skewlab run naive --views 20000 --savepoint-at 10000 --resume-parallelism 4 --savepoint sp1
  skewlab run naive --views 20000 --from-savepoint sp1 --resume-parallelism 2   # resume it later
  skewlab run naive --master 'local[2,4]' --checkpoint-interval 1000 --fail-at 7000
"""


#: The options, with what argparse needs to know of each.
_OPTIONS: dict[str, dict] = {
    "--savepoint-at": dict(
        type=int, default=None, metavar="N",
        help="stop after source record N (seq < N) with a savepoint",
    ),
    "--resume-parallelism": dict(
        type=int, default=None, metavar="P",
        help="with --savepoint-at or --from-savepoint: resume at P subtasks (<= max "
        "parallelism; default for --from-savepoint: the savepoint's)",
    ),
    "--from-savepoint": dict(
        default=None, metavar="PATH",
        help="resume the savepoint kept at PATH over the same views and strategy parameters "
        "(its source position on); prints the resumed job",
    ),
    "--savepoint": dict(
        default=None, metavar="PATH",
        help="with --savepoint-at: keep the savepoint at PATH (default: a temporary directory)",
    ),
    "--in-flight": dict(
        default="flush", choices=IN_FLIGHT_POLICIES,
        help="buffered: how in-flight records enter the savepoint (default flush)",
    ),
    "--checkpoint-interval": dict(
        type=int, default=None, metavar="C",
        help="checkpoint every C records per source subtask (with --fail-at)",
    ),
    "--fail-at": dict(
        type=int, default=None, metavar="F",
        help="the subtask reading source record F fails on its first attempt (needs a master "
        "that retries tasks, e.g. --master 'local[2,4]')",
    ),
}  # fmt: skip


def add_recovery_options(parser: argparse.ArgumentParser) -> None:
    """Add the savepoint, checkpoint and failure options to ``skewlab run``."""
    group = parser.add_argument_group(
        "savepoints and failures",
        "stop with a savepoint and resume at another parallelism; or fail once and recover "
        "from checkpoints (the final digest is compared with the reference)",
    )
    for flag, options in _OPTIONS.items():
        group.add_argument(flag, **options)


def recovery_flags() -> list[str]:
    """The options :func:`add_recovery_options` adds (a strategy that cannot take savepoints
    has none of them).

    Example::

        >>> recovery_flags()[:2]
        ['--savepoint-at', '--resume-parallelism']
    """
    return list(_OPTIONS)


def recovery_requested(args: argparse.Namespace) -> bool:
    """Whether ``skewlab run`` was asked for a savepoint or a failure; checks the options'
    combinations (one line, exit 2, before any work). A strategy without the options (it
    cannot take savepoints) asks for neither."""
    from skewlab.errors import SkewlabInputError

    if not hasattr(args, "savepoint_at"):
        return False

    failure = args.fail_at is not None or args.checkpoint_interval is not None
    if args.from_savepoint is not None:
        if args.savepoint_at is not None or args.savepoint is not None or failure:
            raise SkewlabInputError(
                "--from-savepoint resumes a kept savepoint: give no --savepoint-at, --savepoint, "
                "--fail-at or --checkpoint-interval with it"
            )
        from skewlab.strategies.resume import verify_savepoint

        kept = verify_savepoint(args.from_savepoint)  # before Spark starts
        if args.resume_parallelism is not None:
            from skewlab.state.restore import check_new_parallelism

            check_new_parallelism(args.resume_parallelism, kept.max_parallelism)
        return True
    savepoint = args.savepoint_at is not None or args.resume_parallelism is not None
    if savepoint and (args.savepoint_at is None or args.resume_parallelism is None):
        raise SkewlabInputError("--savepoint-at and --resume-parallelism go together")
    if args.savepoint is not None and not savepoint:
        raise SkewlabInputError("--savepoint needs --savepoint-at and --resume-parallelism")
    if failure and args.fail_at is None:
        raise SkewlabInputError("--checkpoint-interval needs --fail-at (a failure to recover)")
    if savepoint and failure:
        raise SkewlabInputError("give either --savepoint-at or --fail-at, not both")
    if args.savepoint is not None:
        from skewlab.validation import check_writable_dir

        check_writable_dir("savepoint (--savepoint)", args.savepoint)
    if savepoint and (args.max_parallelism is not None or args.parallelism is not None):
        from skewlab.state.key_groups import compute_default_max_parallelism
        from skewlab.state.restore import check_new_parallelism

        max_p = args.max_parallelism or compute_default_max_parallelism(args.parallelism)
        check_new_parallelism(args.resume_parallelism, max_p)
    return savepoint or failure


def run_with_recovery(args: argparse.Namespace, views, strategy, job, spark) -> int:
    """Run the savepoint or failure case and print both jobs (or the recovered one) beside the
    reference digest; exit status 1 when the digest differs."""
    from skewlab.aggregates.digest import result_digest
    from skewlab.aggregates.reference import spark_reference_aggregate
    from skewlab.strategies.resume import run_with_failure, run_with_savepoint

    if args.from_savepoint is not None:
        return _resume_kept(args, views, strategy, job, spark)
    if args.savepoint_at is not None:
        run = run_with_savepoint(
            views, strategy, job, savepoint_at=args.savepoint_at,
            resume_parallelism=args.resume_parallelism, path=args.savepoint,
            in_flight=args.in_flight, spark=spark,
        )  # fmt: skip
        digest, summary = run.result_digest, run.summary()
        tables = [("before the savepoint", run.before), ("after the restore", run.after)]
    else:
        result = run_with_failure(
            views, strategy, job, fail_at=args.fail_at,
            checkpoint_interval=args.checkpoint_interval, spark=spark,
        )  # fmt: skip
        digest, summary = result.result_digest, result.extra.get("recovery", {})
        tables = [("recovered run", result)]
    reference = result_digest(spark_reference_aggregate(views, strategy.precision))
    summary = {**summary, "reference_digest": reference, "digest_equal": digest == reference}
    if args.json:
        print(json.dumps({"summary": summary, **{t: r.to_dict() for t, r in tables}}, default=str))
    else:
        for title, result in tables:
            print(f"-- {title}\n{result.format_table()}\n")
        width = max(len(k) for k in summary)
        print("\n".join(f"{k:<{width}}  {v}" for k, v in summary.items()))
    return 0 if digest == reference else 1


def _resume_kept(args: argparse.Namespace, views, strategy, job, spark) -> int:
    """``--from-savepoint``: the resumed job alone. Its results are the keys it emitted after
    the savepoint's position, so no digest is compared with the whole run's reference."""
    from dataclasses import replace

    from skewlab.engine.savepoint import Savepoint
    from skewlab.strategies.resume import resume_from_savepoint

    kept = Savepoint.load(args.from_savepoint)
    parallelism = args.resume_parallelism or kept.parallelism
    if job.max_parallelism is None:  # the savepoint's key groups, unless told otherwise
        job = replace(job, max_parallelism=kept.max_parallelism)
    result, _ = resume_from_savepoint(
        views, strategy, job, kept, parallelism=parallelism, in_flight=args.in_flight,
        spark=spark,
    )  # fmt: skip
    summary = {
        "savepoint": str(kept.path),
        "source_position": kept.source_position,
        "parallelism_before": kept.parallelism,
        "parallelism_after": parallelism,
        "records_after": result.records_in,
        "restored_keys": result.extra.get("recovery", {}).get("restored_keys"),
    }
    if args.json:
        print(json.dumps({"summary": summary, "after the restore": result.to_dict()}, default=str))
    else:
        print(f"-- after the restore\n{result.format_table()}\n")
        width = max(len(k) for k in summary)
        print("\n".join(f"{k:<{width}}  {v}" for k, v in summary.items()))
    return 0
