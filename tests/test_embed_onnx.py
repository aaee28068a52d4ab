"""The ONNX embedder: a tiny BERT built here, exported, and checked against PyTorch — same vectors,
pooling read from the sentence-transformers config, no torch needed to run the export."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CORPUS = ["The cat sat on the mat.", "Rivers flow to the sea.", "河流从山上流下来。", "Databases index rows."] * 20


@pytest.fixture(scope="module")
def st_folder(tmp_path_factory):
    """A randomly initialised BERT in a sentence-transformers layout (mean pooling + Normalize)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    d = tmp_path_factory.mktemp("tiny-st")
    tk = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer()
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.train_from_iterator(CORPUS, trainers.WordPieceTrainer(
        vocab_size=200, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    from tokenizers.processors import TemplateProcessing

    tk.post_processor = TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[
        ("[CLS]", tk.token_to_id("[CLS]")), ("[SEP]", tk.token_to_id("[SEP]"))])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]",
                                                cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    fast.model_input_names = ["input_ids", "token_type_ids", "attention_mask"]
    cfg = transformers.BertConfig(vocab_size=tk.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=64, max_position_embeddings=128)
    torch.manual_seed(0)
    transformers.BertModel(cfg).save_pretrained(str(d))
    fast.save_pretrained(str(d))
    (d / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    return d


def _reference(folder, texts):
    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    model = transformers.AutoModel.from_pretrained(str(folder)).eval()
    enc = tok(texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    m = enc["attention_mask"][:, :, None].float()
    v = ((h * m).sum(1) / m.sum(1)).numpy()
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def exported(st_folder, tmp_path_factory):
    """One export for the module (the slow step): (the exported folder, its cache folder)."""
    from logichunk.models.embed_onnx import cached_export

    cache = tmp_path_factory.mktemp("onnx-cache")
    return cached_export(st_folder, name="tiny", cache_dir=str(cache)), cache


def test_export_then_embed_matches_pytorch(st_folder, exported):
    from logichunk.models.embed_onnx import CONFIG_NAME, OnnxEmbedder, cached_export

    out, cache = exported
    cfg = json.loads((out / CONFIG_NAME).read_text())
    assert (cfg["pooling"], cfg["normalize"], cfg["max_length"]) == ("mean", True, 64)
    assert cached_export(st_folder, name="tiny", cache_dir=str(cache)) == out  # cached, not re-exported
    texts = ["The cat sat.", "Rivers flow to the sea and on and on.", "河流。", "x " * 200]
    emb = OnnxEmbedder(out, batch_size=2, max_batch_tokens=64)  # forces several sub-batches
    got = emb.embed(texts)
    ref = _reference(st_folder, texts)
    assert got.shape == (4, 32) and got.dtype == np.float32
    np.testing.assert_allclose(got, ref, atol=1e-4)
    # input order is kept whatever the length-sorted batching did
    np.testing.assert_allclose(emb.embed(texts[::-1]), got[::-1], atol=1e-6)


def test_onnx_embedder_runs_without_torch(exported):
    out, _ = exported
    code = ("import sys, numpy as np\n"
            "from logichunk.models.registry import resolve_embedder\n"
            f"r = resolve_embedder('onnx:{out}')\n"
            "v = r.model.embed(['a cat', '河流'])\n"
            "assert v.shape == (2, 32) and abs(float(np.linalg.norm(v[0])) - 1) < 1e-5\n"
            "print('torch' in sys.modules, r.backend)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "onnx"]


def test_bad_folders_are_clear_errors(tmp_path):
    from logichunk.errors import ModelUnavailable
    from logichunk.models.embed_onnx import OnnxEmbedder

    with pytest.raises(ModelUnavailable, match="model.onnx"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokenizer.json").write_text("{", encoding="utf-8")
    with pytest.raises(ModelUnavailable, match="tokenizer.json"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "logichunk_onnx.json").write_text("not json", encoding="utf-8")
    with pytest.raises(ModelUnavailable, match="logichunk_onnx.json"):
        OnnxEmbedder(tmp_path)
