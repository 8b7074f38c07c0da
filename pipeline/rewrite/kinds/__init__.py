"""The node kinds of a rule program, one module per kind (or per small family): each holds its
data class, its TOML and XML readers and its flattening, and names its kernel. kind_table.KINDS
finds them by name."""
