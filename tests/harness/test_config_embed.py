"""[embed] shared_cache: where the user-level embedding cache lives (default under
$XDG_CACHE_HOME or ~/.cache), $RMH_EMBED_CACHE over rmh.toml, "" turns it off; open_vault
wires it behind the vault's own cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.compose import embedding_cache, open_vault
from harness.config import ConfigError, EmbedSection, load
from vault import SharedEmbeddingCache, TieredEmbeddingCache, Vault


def test_default_is_under_xdg_cache_home_then_home(tmp_path: Path) -> None:
    xdg, home = str(tmp_path / "x" / "cache"), str(tmp_path / "h")
    assert load(env={"XDG_CACHE_HOME": xdg, "HOME": home}).embed.shared_cache == (
        str(Path(xdg) / "rmh" / "embeddings.sqlite"))
    assert load(env={"HOME": home}).embed.shared_cache == str(
        Path(home) / ".cache" / "rmh" / "embeddings.sqlite")
    # no home in the environment given: off (load never looks past the mapping it is given)
    assert load(env={}).embed.shared_cache == ""
    assert EmbedSection().shared_cache == ""


def test_rmh_toml_names_it_and_the_environment_overrides(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text('[embed]\nshared_cache = "~/team/emb.sqlite"\n',
                                       encoding="utf-8")
    home, elsewhere = tmp_path / "h", str(tmp_path / "elsewhere" / "e.sqlite")
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "x")}
    assert load(vault=tmp_path, env=env).embed.shared_cache == str(home / "team" / "emb.sqlite")
    over = {**env, "RMH_EMBED_CACHE": elsewhere}
    assert load(vault=tmp_path, env=over).embed.shared_cache == elsewhere
    assert load(vault=tmp_path, env={**env, "RMH_EMBED_CACHE": ""}).embed.shared_cache == ""


def test_empty_string_in_rmh_toml_turns_it_off(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text('[embed]\nshared_cache = ""\n', encoding="utf-8")
    assert load(vault=tmp_path, env={"HOME": str(tmp_path / "h")}).embed.shared_cache == ""


@pytest.mark.parametrize("text", ['[embed]\nshared = "x"\n', "[embed]\nshared_cache = 3\n"])
def test_bad_keys_are_errors(tmp_path: Path, text: str) -> None:
    (tmp_path / "rmh.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError):
        load(vault=tmp_path, env={})


def test_the_test_suite_never_points_at_the_real_home() -> None:
    # tests/conftest.py: the process environment names a per-test file
    path = load().embed.shared_cache
    assert path and "rmh-cache" in path and not path.startswith(str(Path.home() / ".cache"))


def test_open_vault_puts_the_shared_cache_behind_the_vaults_own(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    Vault.init(root).close()
    shared = tmp_path / "shared.sqlite"
    cfg = load(vault=root, env={"RMH_EMBED_CACHE": str(shared)})
    with open_vault(cfg, dense=False) as v:
        cache = v.engine.cache
        assert isinstance(cache, TieredEmbeddingCache) and cache.local is v.index
        assert isinstance(cache.shared, SharedEmbeddingCache) and cache.shared.path == shared
        assert embedding_cache(cfg, v.index).shared is cache.shared  # type: ignore[attr-defined]
    off = load(vault=root, env={"RMH_EMBED_CACHE": ""})
    with open_vault(off, dense=False) as v:
        assert v.engine.cache is v.index


def test_graph_cache_defaults_beside_the_shared_cache_and_can_be_moved_or_off(
        tmp_path: Path) -> None:
    xdg, home = str(tmp_path / "x" / "cache"), str(tmp_path / "h")
    assert load(env={"XDG_CACHE_HOME": xdg, "HOME": home}).embed.graph_cache == str(
        Path(xdg) / "rmh")
    assert load(env={"HOME": home}).embed.graph_cache == str(Path(home) / ".cache" / "rmh")
    assert load(env={}).embed.graph_cache == "" and EmbedSection().graph_cache == ""
    (tmp_path / "rmh.toml").write_text('[embed]\ngraph_cache = "~/graphs"\n', encoding="utf-8")
    env = {"HOME": home}
    assert load(vault=tmp_path, env=env).embed.graph_cache == str(Path(home) / "graphs")
    assert load(vault=tmp_path, env={**env, "RMH_GRAPH_CACHE": ""}).embed.graph_cache == ""
    assert load(vault=tmp_path, env={**env, "RMH_GRAPH_CACHE": xdg}).embed.graph_cache == xdg
    # the suite's processes share one folder for it, never the real home
    assert load().embed.graph_cache and not load().embed.graph_cache.startswith(
        str(Path.home() / ".cache"))


def test_a_dense_search_saves_the_graph_where_configured(tmp_path: Path) -> None:
    from harness import compose

    root = tmp_path / "v"
    root.mkdir()
    (root / "A.md").write_text("Alpha owns the billing service.\n", encoding="utf-8")
    graphs = tmp_path / "graphs"
    compose.shared_encoder.cache_clear()  # a fresh process's state
    try:
        cfg = load(vault=root, env={"RMH_EMBED_CACHE": "", "RMH_GRAPH_CACHE": str(graphs)})
        with open_vault(cfg, create=True) as v:
            assert v.search("billing", k=1)
        (folder,) = [p for p in graphs.iterdir() if p.is_dir()]  # and the fingerprint's memo
        assert [p.name[:12] for p in graphs.iterdir() if not p.is_dir()] == ["fingerprint-"]
        assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "probe", "weights.bin"]
    finally:
        compose.shared_encoder.cache_clear()
