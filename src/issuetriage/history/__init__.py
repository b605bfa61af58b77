"""The repository's labelled history, built once into a folder and kept current (issue #24):
`sources` reads a corpus or the store, `build` fits and writes the folder (docs/history.md)."""
