"""Stages that combine several Levels into one."""
