"""Model folders: exact round trip, never pickle, clear errors for foreign or broken models."""

from __future__ import annotations

import dataclasses
import json
import pickle
import shutil

import numpy as np
import pytest

from issuetriage.errors import ModelError
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned.corpus import load_corpus
from issuetriage.judges.learned.model import load_model, save_model
from issuetriage.judges.learned.thresholds import NEVER
from issuetriage.judges.learned.train import train

from .conftest import SMALL, corpus_records, write_jsonl


@pytest.fixture(scope="module")
def saved_model(policy, tmp_path_factory):
    """One model trained and saved for the module; each test gets its own copy to break."""
    root = tmp_path_factory.mktemp("model_io")
    corpus = load_corpus(write_jsonl(root / "corpus.jsonl", corpus_records()), policy)
    return save_model(train(corpus, policy, config=SMALL), root / "model")


@pytest.fixture()
def model_dir(saved_model, tmp_path):
    return shutil.copytree(saved_model, tmp_path / "model")


def test_saved_model_predicts_exactly_like_the_trained_one(corpus, policy, tmp_path):
    model = train(corpus, policy, config=SMALL)
    loaded = load_model(save_model(model, tmp_path / "m"), profile="pytorch")
    for example in corpus.examples[:10]:
        signals = extract_signals(example.issue)
        assert np.allclose(model.probabilities(signals, {}), loaded.probabilities(signals, {}))
    assert loaded.labels == model.labels and loaded.corpus_sha256 == corpus.sha256
    assert np.array_equal(loaded.thresholds, model.thresholds)


def test_the_prior_veto_survives_saving(corpus, policy, tmp_path):
    config = dataclasses.replace(SMALL, prior_veto=0.25)
    model = train(corpus, policy, prior=HeuristicJudge(), config=config)
    loaded = load_model(save_model(model, tmp_path / "m"), profile="pytorch")
    assert model.prior_veto == loaded.prior_veto == 0.25
    without_prior = train(corpus, policy, config=SMALL)  # nothing to keep without a prior judge
    assert load_model(save_model(without_prior, tmp_path / "n")).prior_veto == NEVER


def test_manifest_records_profile_labels_corpus_hash_and_metrics(model_dir, corpus):
    manifest = json.loads((model_dir / "manifest.json").read_text())
    assert manifest["profile"] == "pytorch" and manifest["corpus_sha256"] == corpus.sha256
    assert set(manifest["thresholds"]) == set(manifest["labels"])
    assert "oncall: pt2" in manifest["labels"] and "out_of_fold_micro" in manifest["metrics"]
    assert sorted(p.name for p in model_dir.iterdir()) == ["manifest.json", "vocabulary.json",
                                                          "weights.npz"]


def test_loading_never_unpickles(model_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pickle used while loading a model")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    assert load_model(model_dir).labels


def test_weights_that_need_pickle_are_refused(model_dir):
    with np.load(model_dir / "weights.npz") as npz:
        arrays = {name: npz[name] for name in npz.files}
    arrays["coef"] = np.array([{"evil": 1}], dtype=object)
    np.savez(model_dir / "weights.npz", **arrays)
    with pytest.raises(ModelError, match="refused to load"):
        load_model(model_dir)


def test_model_for_another_profile_is_a_clear_error(model_dir):
    with pytest.raises(ModelError, match="made for profile 'pytorch', not 'other'"):
        load_model(model_dir, profile="other")


@pytest.mark.parametrize("key, value, message", [
    ("issuetriage_version", "0.0.1", "made by issuetriage 0.0.1"),
    ("format_version", 99, "format version 99"),
    ("format", "something-else", "not an issuetriage learned model"),
])
def test_model_from_another_version_is_a_clear_error(model_dir, key, value, message):
    path = model_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest[key] = value
    path.write_text(json.dumps(manifest))
    with pytest.raises(ModelError, match=message):
        load_model(model_dir)


@pytest.mark.parametrize("broken", ["weights.npz", "vocabulary.json", "manifest.json"])
def test_missing_or_corrupt_files_are_model_errors(model_dir, broken):
    (model_dir / broken).write_bytes(b"\x00garbage")
    with pytest.raises(ModelError):
        load_model(model_dir)


def test_vocabulary_that_does_not_fit_the_weights_is_refused(model_dir):
    (model_dir / "vocabulary.json").write_text(json.dumps(["just", "three", "tokens"]))
    with pytest.raises(ModelError, match="shape"):
        load_model(model_dir)


def test_no_folder_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="no model folder"):
        load_model(tmp_path / "absent")


def test_saving_over_an_existing_model_replaces_it_whole(corpus, policy, tmp_path):
    out = tmp_path / "models" / "m"
    save_model(train(corpus, policy, config=SMALL), out)
    (out / "stray.txt").write_text("old")
    save_model(train(corpus, policy, config=SMALL), out)
    assert not (out / "stray.txt").exists() and load_model(out).labels
    assert [p.name for p in out.parent.iterdir()] == ["m"]


def test_saving_over_a_file_or_a_folder_that_is_not_a_model_is_refused(corpus, policy, tmp_path):
    model = train(corpus, policy, config=SMALL)
    place = tmp_path / "place"
    place.mkdir()
    a_file = place / "notes.txt"
    a_file.write_text("keep me")
    project = place / "project"
    project.mkdir()
    (project / "main.py").write_text("keep me too")
    for out in (a_file, project):
        with pytest.raises(ModelError, match="not a model folder"):
            save_model(model, out)
    assert a_file.read_text() == "keep me" and (project / "main.py").read_text() == "keep me too"
    assert sorted(p.name for p in place.iterdir()) == ["notes.txt", "project"]


def test_saving_into_an_empty_folder_is_fine(corpus, policy, tmp_path):
    (tmp_path / "m").mkdir()
    assert load_model(save_model(train(corpus, policy, config=SMALL), tmp_path / "m")).labels
