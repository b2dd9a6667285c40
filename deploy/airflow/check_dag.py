"""Imports smoothanon_nightly.py, renders its tasks for one date and prints
their command lines as JSON: {"release": [argv...], "linkage": [argv...]}.
Run by deploy/airflow_test.go; exits 3 when Airflow or the Beam provider is
not installed."""

import json
import os
import sys

try:
    from airflow.providers.apache.beam.hooks.beam import beam_options_to_args
    from airflow.providers.apache.beam.operators.beam import BeamRunGoPipelineOperator
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.version import version
except ImportError as e:
    print("airflow or apache-airflow-providers-apache-beam missing: %s" % e, file=sys.stderr)
    sys.exit(3)

import importlib.util
import jinja2
import shlex

date = sys.argv[1]
spec = importlib.util.spec_from_file_location("dag", os.path.join(os.path.dirname(__file__), "smoothanon_nightly.py"))
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
dag = mod.dag
ctx = {"ds": date, "ds_nodash": date.replace("-", "")}
render = lambda s: jinja2.Template(s).render(**ctx) if isinstance(s, str) else s
out = {"dag_id": dag.dag_id}
for task in dag.tasks:
    if isinstance(task, BeamRunGoPipelineOperator):
        opts = {k: render(v) for k, v in task.pipeline_options.items()}
        opts["runner"] = render(task.runner)
        opts["worker_binary"] = render(task.worker_binary)
        # execute() adds this label before starting the launcher.
        opts.setdefault("labels", {}).update({"airflow-version": "v" + version.replace(".", "-").replace("+", "-")})
        out[task.task_id] = [render(task.launcher_binary)] + beam_options_to_args(opts)
        out[task.task_id + "_upstream"] = sorted(task.upstream_task_ids)
    elif isinstance(task, BashOperator):
        out[task.task_id] = shlex.split(render(task.bash_command))
        out[task.task_id + "_upstream"] = sorted(task.upstream_task_ids)
    else:
        print("unexpected task %s (%s)" % (task.task_id, type(task).__name__), file=sys.stderr)
        sys.exit(1)
print(json.dumps(out))
