"""
Mandatory Security Tests

This module contains tests for mandatory security requirements as specified
in the A2A v0.3.0 specification Section 4 (Authentication and Authorization).

These tests verify security compliance requirements that are mandatory
for production A2A deployments.
"""
