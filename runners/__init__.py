"""Runner presets. Every pipeline names its runner explicitly.

Why presets: Beam 2.77's `DirectRunner` first tries to start the Prism runner, which downloads a
binary; on an offline machine that fails slowly before falling back. `direct` therefore runs
Beam's FnApiRunner itself (what the DirectRunner falls back to for batch pipelines).

| preset        | what runs                                                                  |
|---------------|----------------------------------------------------------------------------|
| direct        | FnApiRunner, in memory, one process (the default)                          |
| direct-mp     | FnApiRunner, `--direct_running_mode=multi_processing`, 2 workers           |
| bundle        | BundleBasedDirectRunner: supports TestStream / streaming on one machine    |
| any other     | passed through as `--runner=NAME` (PortableRunner, FlinkRunner, Dataflow…) |
"""

from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

PRESETS = ("direct", "direct-mp", "bundle")


def make_runner(name: str):
    """A runner object for a preset, or None when Beam should resolve `--runner` itself.

    >>> type(make_runner("direct")).__name__
    'FnApiRunner'
    >>> make_runner("FlinkRunner") is None
    True
    """
    if name in ("direct", "DirectRunner", "direct-mp"):
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        return FnApiRunner()
    if name in ("bundle", "BundleBasedDirectRunner"):
        from apache_beam.runners.direct.direct_runner import BundleBasedDirectRunner

        return BundleBasedDirectRunner()
    return None


def pipeline_options(name: str, beam_args: list[str] | None = None) -> PipelineOptions:
    """PipelineOptions for a preset plus any pass-through Beam flags.

    >>> pipeline_options("direct-mp").get_all_options()["direct_running_mode"]
    'multi_processing'
    """
    args = list(beam_args or [])
    if name == "direct-mp":
        if not any(a.startswith("--direct_running_mode") for a in args):
            args.append("--direct_running_mode=multi_processing")
        if not any(a.startswith("--direct_num_workers") for a in args):
            args.append("--direct_num_workers=2")
    elif name in ("direct", "DirectRunner"):
        if not any(a.startswith("--direct_running_mode") for a in args):
            args.append("--direct_running_mode=in_memory")
    elif make_runner(name) is None:
        args = [f"--runner={name}", *args]
    return PipelineOptions(args)
