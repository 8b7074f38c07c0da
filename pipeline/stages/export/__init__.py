"""Exporters: stages that turn a Level into files inside the pack folder."""
