"""Can the model behind a table be run here, and if not, why: the ONE check
that every view running a model asks (Cost › Context-free runs its first
layer, Health › "Verify with the model" runs it whole), so two views never
disagree about the same file.

A model runs here when its weights and configuration are on disk in a form
transformers reads without remote code (a Hugging Face folder with
safetensors, or a GGUF file, which transformers dequantises), for an
architecture the installed transformers ships; or when it is the explorer's
own toy model (run with torch alone). Cheap: file-system checks and the
GGUF header, no model is loaded and transformers is not imported. No Qt here.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.training.model import TOY_MODEL_TYPE

__all__ = ["RunnableModel", "runnable_model", "transformers_knows", "load_arguments"]

_NO_MODEL = ("This table has no model behind it (a toy or random table), so there is nothing to run. "
             "Open the bundled model (default), MiniLM (minilm) or SmolLM2 (smollm2) to see one.")


def transformers_knows(model_type: str) -> bool:
    """Whether the installed transformers ships this architecture (a file
    system check: importing transformers costs seconds)."""
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations or not model_type:
        return False
    base = Path(list(spec.submodule_search_locations)[0]) / "models"
    return (base / model_type.replace("-", "_")).is_dir()


@dataclass(frozen=True)
class RunnableModel:
    """What :func:`runnable_model` found.

    Attributes
    ----------
    path : Path or None
        What to load: a model folder, or a GGUF file; None when the model
        cannot be run here (``reason`` says why).
    model_type : str
        The architecture ("bert", "llama", the toy's own type).
    architectures : tuple of str
        The configuration's model classes ("BertModel", "LlamaForCausalLM").
    reason : str
        Empty when the model can be run.
    """

    path: Path | None
    model_type: str = ""
    architectures: tuple[str, ...] = field(default_factory=tuple)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.path is not None

    @property
    def toy(self) -> bool:
        """The explorer's own model, run with torch alone."""
        return self.model_type == TOY_MODEL_TYPE

    @property
    def causal(self) -> bool:
        """A transformers model that predicts the next token (can be asked to repeat one)."""
        return self.ok and not self.toy and any(a.endswith(("ForCausalLM", "LMHeadModel"))
                                                for a in self.architectures)

    def pretrained_args(self) -> tuple[str, dict]:
        """(folder, extra ``from_pretrained`` keyword arguments): a GGUF file is
        its folder plus ``gguf_file``."""
        if self.path is None:
            raise ValueError(self.reason or "no model to load")
        return load_arguments(self.path)


def load_arguments(path) -> tuple[str, dict]:
    """(folder, extra ``from_pretrained`` keyword arguments) for a model folder or a GGUF file."""
    path = Path(path)
    if path.suffix.lower() == ".gguf":
        return str(path.parent), {"gguf_file": path.name}
    return str(path), {}


def _gguf(path: Path) -> RunnableModel:
    from explorer.core.sources import ggufio

    try:
        arch = ggufio.read_header(path).metadata.get("general.architecture", "")
    except (OSError, ValueError) as exc:
        return RunnableModel(None, reason=f"The GGUF file could not be read ({str(exc)[:120]}).")
    arch = arch if isinstance(arch, str) else ""
    if importlib.util.find_spec("gguf") is None:
        return RunnableModel(None, arch, reason="Running a GGUF model needs the gguf package, which is not "
                                               "installed (pip install gguf); the embedding table itself is fine.")
    if not transformers_knows(arch):
        return RunnableModel(None, arch, reason=f"transformers does not know the architecture “{arch or '?'}” of "
                                               "this GGUF file, so its layers cannot be run here (the embedding "
                                               "table itself is fine).")
    # a GGUF file names no model class: a decoder-only file is a causal language model
    return RunnableModel(path, arch, ("ForCausalLM",))


def runnable_model(table) -> RunnableModel:
    """Whether the model behind ``table`` can be run here, and if not why.

    Parameters
    ----------
    table : EmbeddingTable or None

    Returns
    -------
    RunnableModel
        ``ok`` with the path to load, or ``reason`` as one sentence.
    """
    if table is None:
        return RunnableModel(None, reason="Open a model.")
    path = getattr(table, "path", None)
    if getattr(table, "kind", "") in ("toy", "random") or path is None:
        return RunnableModel(None, reason=_NO_MODEL)
    path = Path(path)
    if path.suffix.lower() == ".gguf":
        return _gguf(path)
    folder = path if path.is_dir() else path.parent
    if not path.is_dir() and not (folder / "config.json").is_file():
        return RunnableModel(None, reason="Only a single weights file was opened, without the model's "
                                          "configuration; open its folder instead.")
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        model_type = str(config.get("model_type", "") or "")
        archs = tuple(a for a in config.get("architectures") or () if isinstance(a, str))
    except (OSError, ValueError, AttributeError):
        return RunnableModel(None, reason="The folder has no readable config.json, so the model cannot be built.")
    if model_type == TOY_MODEL_TYPE:
        return RunnableModel(folder, model_type, archs)  # run by the project's own code, no transformers
    if not any(folder.glob("*.safetensors")):
        return RunnableModel(None, model_type, archs, "The folder has no safetensors weights (the explorer never "
                                                      "unpickles .bin files), so the model cannot be run here.")
    if not transformers_knows(model_type):
        return RunnableModel(None, model_type, archs,
                             f"transformers does not know the architecture “{model_type or '?'}” of this model, "
                             "so its layers cannot be run here (the embedding table itself is fine).")
    return RunnableModel(folder, model_type, archs)
