"""
A2A v0.3.0 Protocol: Mandatory A2A-Specific Error Code Tests

SPECIFICATION REQUIREMENTS (Section 8.2):
- "Servers SHOULD use these codes where applicable"
- A2A-specific error codes -32001 to -32006 for protocol-specific errors
- Proper error message format and structure compliance

These tests verify that A2A-specific error codes are properly implemented
and returned in appropriate error scenarios according to the specification.

Reference: A2A v0.3.0 Specification Section 8.2 (A2A-Specific Errors)
"""

import logging
from typing import Dict, Any

import pytest

from tck import message_utils
from tests.markers import mandatory
from tests.utils import transport_helpers
from tests.markers import mandatory_jsonrpc

logger = logging.getLogger(__name__)


def verify_a2a_error_response(response: Dict[str, Any], expected_code: int, expected_message_keywords: list = None) -> None:
    """
    Verify that a JSON-RPC response contains a proper A2A error code.

    Args:
        response: JSON-RPC response dictionary
        expected_code: Expected A2A error code
        expected_message_keywords: Optional keywords that should appear in error message
    """
    assert "error" in response, "Response should contain error object"

    error = response["error"]
    assert "code" in error, "Error object should contain code field"
    assert "message" in error, "Error object should contain message field"

    error_code = error["code"]
    error_message = error["message"]

    assert error_code == expected_code, f"Expected error code {expected_code}, got {error_code}"
    assert isinstance(error_message, str), "Error message should be a string"
    assert len(error_message) > 0, "Error message should not be empty"

    if expected_message_keywords:
        message_lower = error_message.lower()
        for keyword in expected_message_keywords:
            assert keyword.lower() in message_lower, f"Error message should contain '{keyword}': {error_message}"

    logger.info(f"✅ A2A error code {expected_code} properly returned with message: {error_message}")


@mandatory_jsonrpc
def test_push_notification_not_supported_error_32003(sut_client, agent_card_data):
    """
    MANDATORY: A2A v0.3.0 Section 8.2 - PushNotificationNotSupportedError (-32003)

    Tests that the server properly returns error code -32003 when push notification
    features are used but not supported by the agent.

    Error Definition:
    - Code: -32003
    - Message: "Push Notification is not supported"
    - Usage: When client attempts push notification methods on agents that don't support them

    Test Procedure:
    1. Check if agent supports push notifications in capabilities
    2. If not supported, attempt push notification config methods
    3. Verify -32003 error is returned with appropriate message

    Asserts:
        - Error code -32003 is returned for unsupported push notification operations
        - Error message indicates push notification not supported
        - Proper JSON-RPC error structure is maintained
    """
    # First check if agent declares push notification support
    try:
        agent_card = {}
        # Try to get extended agent card first
        result = transport_helpers.transport_get_extended_agent_card(sut_client)
        if isinstance(result.get("result"), dict):
            agent_card = result["result"]
        else:
            # Fallback to public agent card from fixture
            agent_card = agent_card_data if agent_card_data else {}
        capabilities = agent_card.get("capabilities", {})
        push_notifications_supported = capabilities.get("pushNotifications", False)

        if push_notifications_supported:
            pytest.skip("Agent declares push notification support - cannot test -32003 error")

        logger.info("Agent does not support push notifications - testing -32003 error")

    except Exception as e:
        logger.warning(f"Could not retrieve agent card: {e}")
        # Continue with test anyway

    # Create a test message to get a task ID first
    req_id = message_utils.generate_request_id()
    test_message = {
        "role": "ROLE_USER",
        "parts": [{"text": "Test message for push notification error test"}],
        "messageId": f"msg-{req_id}",
    }

    # Send message to create a task
    try:
        message_response = transport_helpers.transport_send_message(sut_client, {"message": test_message})

        # Extract task ID from response
        task_id = None
        if "result" in message_response and isinstance(message_response["result"], dict):
            task = message_response["result"]
            if "id" in task:
                task_id = task["id"]

        if not task_id:
            # Create a fake task ID if we couldn't get one
            task_id = f"test-task-{req_id}"

        logger.info(f"Using task ID for push notification test: {task_id}")

        # Now attempt to set push notification config on the task
        push_config_params = {
            "taskId": task_id,
            "pushNotificationConfig": {"url": "https://example.com/webhook", "token": "test-token"},
        }

        # Use the raw send method for JSON-RPC since transport helpers don't have this method
        json_rpc_request = message_utils.make_json_rpc_request(
            "tasks/pushNotificationConfig/set", params=push_config_params, id=f"push-{req_id}"
        )
        logger.info(f"Push notification request: {json_rpc_request}")
        try:
            response = sut_client.send_raw_json_rpc(json_rpc_request)
            # If we reach here, the request succeeded unexpectedly
            # This might mean the agent actually supports push notifications
            logger.warning(f"Push notification request succeeded unexpectedly: {response}")
            pytest.skip("SUT appears to support push notifications despite agent card not declaring it")
        except Exception as e:
            # Extract JSON-RPC error from the exception
            if hasattr(e, "json_rpc_error") and e.json_rpc_error:
                error = e.json_rpc_error
                error_code = error.get("code")

                # Should return -32003 for unsupported push notifications
                if error_code == -32003:
                    # Create a mock response for verification
                    response = {"error": error}
                    verify_a2a_error_response(response, -32003, ["push", "notification", "not", "supported"])
                elif error_code == -32601:
                    # Method not found is also acceptable if push notification methods aren't implemented
                    logger.info("Push notification methods not implemented (method not found)")
                    pytest.skip("Push notification methods not implemented - cannot test -32003")
                else:
                    pytest.fail(
                        f"Expected PushNotificationNotSupportedError (-32003) or MethodNotFoundError (-32601), got {error_code}"
                    )
            else:
                # Re-raise the exception if it's not a JSON-RPC error
                raise

    except Exception as e:
        pytest.fail(f"Failed to test push notification error: {e}")


@mandatory_jsonrpc
@mandatory
def test_unsupported_operation_error_32004(sut_client, agent_card_data):
    """
    MANDATORY: A2A v0.3.0 Section 8.2 - UnsupportedOperationError (-32004)

    Tests that the server properly returns error code -32004 when an operation
    or specific aspect of an operation is not supported by the agent implementation.

    Error Definition:
    - Code: -32004
    - Message: "This operation is not supported"
    - Usage: For operations that are broader than just method not found

    Test Procedure:
    1. Attempt operations that might not be supported (streaming without capability)
    2. Use invalid parameters that represent unsupported operations
    3. Verify -32004 error is returned with appropriate message

    Asserts:
        - Error code -32004 is returned for unsupported operations
        - Error message indicates operation not supported
        - Distinguishes from method not found (-32601)
    """
    # Test 1: Try streaming operation on agent that doesn't support streaming
    try:
        agent_card = {}
        # Try to get extended agent card first
        result = transport_helpers.transport_get_extended_agent_card(sut_client)
        if isinstance(result.get("result"), dict):
            agent_card = result["result"]
        else:
            # Fallback to public agent card from fixture
            agent_card = agent_card_data if agent_card_data else {}
        capabilities = agent_card.get("capabilities", {})
        streaming_supported = capabilities.get("streaming", False)

        if not streaming_supported:
            logger.info("Agent does not support streaming - testing -32004 error")

            req_id = message_utils.generate_request_id()
            message_data = {
                "role": "ROLE_USER",
                "parts": [{"text": "test message for streaming"}],
                "messageId": f"msg-{req_id}",
            }

            params = {"message": message_data}

            response = transport_helpers.transport_send_streaming_message(sut_client, params)

            if "error" in response:
                error_code = response["error"]["code"]

                if error_code == -32004:
                    verify_a2a_error_response(response, -32004, ["operation", "not", "supported"])
                    return  # Test successful
                elif error_code == -32601:
                    logger.info("Streaming method not found (acceptable for non-streaming agents)")
                else:
                    logger.warning(f"Expected -32004 or -32601 for unsupported streaming, got {error_code}")

    except Exception as e:
        logger.warning(f"Streaming test failed: {e}")

    # Test 2: Try to use unsupported configuration options
    req_id = message_utils.generate_request_id()

    # Attempt SendMessage with potentially unsupported configuration
    message = {
        "message": {
        "role": "ROLE_USER", "parts": [{"text": "test"}], "messageId": f"msg-{req_id}"
        }
    }

    # Add configuration that might not be supported
    configuration = {
        "returnImmediately": False,
        "acceptedOutputModes": ["application/unsupported-format"],
        "historyLength": 999999,  # Very large number that might be unsupported
    }

    try:
        response = transport_helpers.transport_send_message(sut_client, message, configuration)

        if "error" in response:
            error_code = response["error"]["code"]

            if error_code == -32004:
                verify_a2a_error_response(response, -32004, ["operation", "not", "supported"])
                return
            elif error_code in (-32602, -32005):
                logger.info(f"Got related error code {error_code} instead of -32004 (acceptable)")
            else:
                logger.info(f"No -32004 error for unsupported configuration (got {error_code})")
        else:
            logger.info("No error for potentially unsupported configuration")

    except Exception as e:
        logger.warning(f"Unsupported operation test failed: {e}")

    # If no -32004 error was triggered, skip the test
    pytest.skip("Could not trigger UnsupportedOperationError (-32004) with available test scenarios")


@mandatory
def test_content_type_not_supported_error_32005(sut_client):
    """
    MANDATORY: A2A v0.3.0 Section 8.2 - ContentTypeNotSupportedError (-32005)

    Tests that the server properly returns error code -32005 when a Media Type
    provided in message parts or implied for artifacts is not supported.

    Error Definition:
    - Code: -32005
    - Message: "Incompatible content types"
    - Usage: When unsupported Media Types are used in message parts or artifacts

    Test Procedure:
    1. Send message with unsupported MIME type in FilePart
    2. Request output in unsupported format
    3. Verify -32005 error is returned with appropriate message

    Asserts:
        - Error code -32005 is returned for unsupported content types
        - Error message indicates content type incompatibility
        - Proper validation of MIME types in message parts
    """
    req_id = message_utils.generate_request_id()

    # Test 1: Send message with unsupported file MIME type
    message_data = {
        "role": "ROLE_USER",
        "parts": [
            {"text": "Please process this file"},
            {
                "file": {
                    "name": "test.unsupported",
                    "mediaType": "application/x-totally-unsupported-format",
                    "fileWithBytes": "VGVzdCBkYXRh",  # "Test data" in base64
                },
            },
        ],
        "messageId": f"msg-{req_id}",
    }

    params = {"message": message_data}

    try:
        response = transport_helpers.transport_send_json_rpc_request(sut_client, "SendMessage", params=params, id=req_id)

        if "error" in response:
            error_code = response["error"]["code"]

            if error_code == -32005:
                verify_a2a_error_response(response, -32005, ["content", "type", "incompatible"])
                return
            elif error_code == -32602:
                logger.info("Got InvalidParams error instead of ContentTypeNotSupported (acceptable)")
            else:
                logger.info(f"No -32005 error for unsupported MIME type (got {error_code})")
        else:
            logger.info("No error for unsupported MIME type - agent may be permissive")

    except Exception as e:
        logger.warning(f"Content type test with file failed: {e}")

    # Test 2: Request unsupported output format
    req_id = message_utils.generate_request_id()

    message_data = {
        "role": "ROLE_USER",
        "parts": [{"text": "Generate output in unsupported format"}],
        "messageId": f"msg-{req_id}",
    }

    params = {
        "message": message_data,
        "configuration": {"acceptedOutputModes": ["application/x-completely-unsupported-output-format"]},
    }

    try:
        response = transport_helpers.transport_send_json_rpc_request(sut_client, "SendMessage", params=params, id=req_id)

        if "error" in response:
            error_code = response["error"]["code"]

            if error_code == -32005:
                verify_a2a_error_response(response, -32005, ["content", "type", "incompatible"])
                return
            elif error_code in (-32602, -32004):
                logger.info(f"Got related error code {error_code} instead of -32005 (acceptable)")
            else:
                logger.info(f"No -32005 error for unsupported output format (got {error_code})")
        else:
            logger.info("No error for unsupported output format")

    except Exception as e:
        logger.warning(f"Content type test with output format failed: {e}")

    # If no -32005 error was triggered, skip the test
    pytest.skip("Could not trigger ContentTypeNotSupportedError (-32005) with available test scenarios")


@mandatory
def test_invalid_agent_response_error_32006(sut_client):
    """
    MANDATORY: A2A v0.3.0 Section 8.2 - InvalidAgentResponseError (-32006)

    Tests that the server properly returns error code -32006 when the agent
    generates an invalid response that doesn't conform to the specification.

    Error Definition:
    - Code: -32006
    - Message: "Invalid agent response type"
    - Usage: When agent returns malformed or spec-violating responses

    Note: This error is typically internal to the agent implementation.
    It's difficult to test from external client perspective since it indicates
    agent implementation bugs rather than client request issues.

    Test Procedure:
    1. Document that -32006 should be returned for invalid agent responses
    2. Note that this is typically an internal error
    3. Skip test if cannot be triggered externally

    Asserts:
        - Error code -32006 structure is documented for implementers
        - Proper error message format is defined
        - Test scenarios for internal agent response validation
    """
    logger.info("Testing InvalidAgentResponseError (-32006)")
    logger.info("Note: This error typically indicates internal agent implementation issues")

    # This error is primarily for internal agent validation
    # It's difficult to trigger from external tests since it indicates
    # bugs in the agent's own response generation

    # Document expected behavior for implementers
    expected_error_structure = {
        "code": -32006,
        "message": "Invalid agent response type",
        "data": None,  # Optional additional data
    }

    logger.info(f"Expected error structure for -32006: {expected_error_structure}")

    # Since this is an internal error that indicates agent bugs,
    # we cannot reliably trigger it from external tests
    # The test serves to document the requirement for implementers

    pytest.skip(
        "InvalidAgentResponseError (-32006) is an internal agent error that cannot be reliably "
        "triggered from external tests. This test documents the requirement for A2A implementers "
        "to return this error code when their agent generates invalid responses."
    )


@mandatory
def test_a2a_error_code_coverage_summary():
    """
    MANDATORY: A2A v0.3.0 Section 8.2 - Error Code Coverage Summary

    Documents the complete coverage of A2A-specific error codes and their
    implementation status in the TCK test suite.

    This test serves as documentation and verification that all A2A error
    codes have been considered and tested where possible.

    Error Code Coverage:
    - -32001 TaskNotFoundError: COVERED (in test_tasks_get_method.py, test_tasks_cancel_method.py)
    - -32002 TaskNotCancelableError: COVERED (in test_tasks_cancel_method.py)
    - -32003 PushNotificationNotSupportedError: COVERED (in this file)
    - -32004 UnsupportedOperationError: COVERED (in this file)
    - -32005 ContentTypeNotSupportedError: COVERED (in this file)
    - -32006 InvalidAgentResponseError: DOCUMENTED (internal error, difficult to test externally)

    Asserts:
        - All A2A error codes are documented
        - Test coverage exists for testable error codes
        - Implementation guidance provided for internal errors
    """
    a2a_error_codes = {
        -32001: {
            "name": "TaskNotFoundError",
            "message": "Task not found",
            "coverage": "COVERED",
            "test_location": "test_tasks_get_method.py, test_tasks_cancel_method.py",
        },
        -32002: {
            "name": "TaskNotCancelableError",
            "message": "Task cannot be canceled",
            "coverage": "COVERED",
            "test_location": "test_tasks_cancel_method.py",
        },
        -32003: {
            "name": "PushNotificationNotSupportedError",
            "message": "Push Notification is not supported",
            "coverage": "COVERED",
            "test_location": "test_a2a_error_codes.py::test_push_notification_not_supported_error_32003",
        },
        -32004: {
            "name": "UnsupportedOperationError",
            "message": "This operation is not supported",
            "coverage": "COVERED",
            "test_location": "test_a2a_error_codes.py::test_unsupported_operation_error_32004",
        },
        -32005: {
            "name": "ContentTypeNotSupportedError",
            "message": "Incompatible content types",
            "coverage": "COVERED",
            "test_location": "test_a2a_error_codes.py::test_content_type_not_supported_error_32005",
        },
        -32006: {
            "name": "InvalidAgentResponseError",
            "message": "Invalid agent response type",
            "coverage": "DOCUMENTED",
            "test_location": "test_a2a_error_codes.py::test_invalid_agent_response_error_32006",
        },
    }

    logger.info("A2A v0.3.0 Error Code Coverage Summary:")
    logger.info("=" * 50)

    for code, info in a2a_error_codes.items():
        logger.info(f"Error {code}: {info['name']}")
        logger.info(f"  Message: {info['message']}")
        logger.info(f"  Coverage: {info['coverage']}")
        logger.info(f"  Test Location: {info['test_location']}")
        logger.info("")

    # Verify all error codes are accounted for
    expected_codes = [-32001, -32002, -32003, -32004, -32005, -32006]
    actual_codes = list(a2a_error_codes.keys())

    assert set(actual_codes) == set(expected_codes), f"Missing error codes: {set(expected_codes) - set(actual_codes)}"

    logger.info("✅ All A2A-specific error codes (-32001 to -32006) have test coverage or documentation")
    logger.info("✅ A2A v0.3.0 Section 8.2 compliance verification complete")
