"""Trains the classifiers of the learning experiment (cmd/figures -learning).

Usage: learn.py SPEC.json OUT.json

SPEC names the training labels, the original test rows and labels, and one
job per release of the training rows (a rows file and a model seed). Rows
files hold one row a line, its feature ids separated by spaces; labels files
one 0/1 label a line. Every job trains scikit-learn's MLPClassifier with one
hidden layer of 10 ReLU units (the paper's model) on the release, and its
accuracy on the test rows is written to OUT as {"model": ..., "accuracy":
{job id: accuracy}}.
"""

import json
import sys

import numpy as np
import scipy.sparse
import sklearn
from sklearn.neural_network import MLPClassifier

MODEL = ("scikit-learn %s MLPClassifier(hidden_layer_sizes=(10,), activation='relu', "
         "early_stopping=True)" % sklearn.__version__)


def read_rows(path, columns):
    """Reads a rows file as a CSR matrix of 0/1 values with `columns` columns."""
    indptr, indices = [0], []
    with open(path) as f:
        for line in f:
            ids = [int(x) for x in line.split()]
            indices.extend(ids)
            indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, columns))


def read_labels(path):
    with open(path) as f:
        return np.array([int(line) for line in f], dtype=np.int64)


def main(spec_path, out_path):
    with open(spec_path) as f:
        spec = json.load(f)
    columns = spec["columns"]
    y_train = read_labels(spec["labels"])
    x_test, y_test = read_rows(spec["test_rows"], columns), read_labels(spec["test_labels"])
    accuracy = {}
    for i, job in enumerate(spec["jobs"]):
        x = read_rows(job["rows"], columns)
        if x.shape[0] != len(y_train):
            sys.exit("%s: %d rows for %d labels" % (job["rows"], x.shape[0], len(y_train)))
        model = MLPClassifier(hidden_layer_sizes=(10,), activation="relu", early_stopping=True,
                              random_state=job["seed"], max_iter=200)
        model.fit(x, y_train)
        accuracy[job["id"]] = float(model.score(x_test, y_test))
        if (i + 1) % 50 == 0:
            print("learn.py: %d of %d models trained" % (i + 1, len(spec["jobs"])), file=sys.stderr)
    with open(out_path, "w") as f:
        json.dump({"model": MODEL, "accuracy": accuracy}, f)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
