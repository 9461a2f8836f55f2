"""The errors the server answers with, as TorchServe shapes them: a JSON body
{"code": C, "type": ..., "message": ...} with the HTTP status C."""
import json


class ServeError(Exception):
    """An answer other than success; `status` and `type` go into the JSON body."""

    status = 500
    type = "InternalServerException"

    def __init__(self, message, headers=None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}


class BadRequest(ServeError):
    status = 400
    type = "BadRequestException"


class ModelNotFound(ServeError):
    status = 404
    type = "ModelNotFoundException"


class NotAcceptable(ServeError):
    status = 406
    type = "NotAcceptableException"


class Conflict(ServeError):
    status = 409
    type = "ConflictStatusException"


class PayloadTooLarge(ServeError):
    status = 413
    type = "RequestEntityTooLargeException"


class ModelError(ServeError):
    """The model's forward raised: the request fails, the server keeps serving."""
    status = 500
    type = "InternalServerException"


class ServiceUnavailable(ServeError):
    status = 503
    type = "ServiceUnavailableException"


def error_body(status, type_, message):
    return json.dumps({"code": status, "type": type_, "message": message})
