"""The nightly smoothanon release as an Airflow DAG (docs/nightly.md).

Every day's partition of the bucket is anonymized on Dataflow by the Apache
Beam provider's Go operator, published under its date, then linked with the
night before. {{ ds }} (the run's logical date, YYYY-MM-DD) is passed as
--date; the paths keep smoothanon's own {date} templates, so the run id is
the date and a retry or backfill of a night already published exits 0
without drawing a key or writing anything.

The Airflow worker needs the smoothanon binary (`make build`) installed as
LAUNCHER and, beside it, the name smoothanon-run (a symlink): the operator
starts the launcher with Beam's flags only, and under that name the binary
is `smoothanon run`. Edit BUCKET, PROJECT, REGION, IMAGE, KEYS and K.
Checked by deploy/airflow_test.go (imports this file, renders the commands
for one date and checks every flag against `smoothanon run -h` and
`smoothanon linkage -h`).
"""

import pendulum

from airflow.providers.apache.beam.operators.beam import BeamRunGoPipelineOperator
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

BUCKET = "gs://B"
PROJECT = "P"
REGION = "europe-west1"
IMAGE = "europe-west1-docker.pkg.dev/P/smoothanon/smoothanon:dev"
BINARY = "/opt/smoothanon/bin/smoothanon"
LAUNCHER = "/opt/smoothanon/bin/smoothanon-run"
KEYS = "/var/lib/smoothanon/keys"  # drawn pseudonym keys, one per night: keep under your access control
K = 8

with DAG(
    dag_id="smoothanon_nightly",
    schedule="30 2 * * *",
    start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["smoothanon"],
) as dag:
    release = BeamRunGoPipelineOperator(
        task_id="release",
        launcher_binary=LAUNCHER,
        worker_binary=BINARY,
        # "dataflow", not "DataflowRunner": smoothanon launches the Dataflow
        # job and waits for it itself (it judges the release by the job's
        # metrics); with DataflowRunner the operator would also track the
        # job and pass its own --job_name, --project and --region from a
        # dataflow_config. (The Beam operators need the Google provider
        # installed either way: apache-airflow-providers-apache-beam[google].)
        runner="dataflow",
        pipeline_options={
            "date": "{{ ds }}",
            "input": BUCKET + "/interests/dt={date}/*.parquet",
            "output": BUCKET + "/releases/dt={date}",
            "metrics_out": BUCKET + "/reports/dt={date}.json",
            "pseudonym_key_out": KEYS + "/{date}.key",
            # The quality gate: a night whose Jaccard, suppressed or
            # created share moved more than 5 points since the night
            # before publishes nothing and fails (exit 5).
            "max_drift": "0.05",
            "previous_report": BUCKET + "/reports/dt={date-1}.json",
            "k": K,
            "mode": "smooth",
            "temp_location": BUCKET + "/tmp",
            "staging_location": BUCKET + "/staging",
            "sdk_container_image": IMAGE,
            "project": PROJECT,
            "region": REGION,
            "job_name": "smoothanon-{{ ds_nodash }}",
        },
        retries=2,
    )
    linkage = BashOperator(
        task_id="linkage",
        bash_command=(
            BINARY + " linkage --date={{ ds }} --k=" + str(K)
            + " --release='" + BUCKET + "/releases/dt={date-1}'"
            + " --release='" + BUCKET + "/releases/dt={date}'"
        ),
    )
    release >> linkage
