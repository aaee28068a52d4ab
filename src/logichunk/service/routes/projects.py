"""Projects: independent collections of documents inside one database."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..errors import ApiError
from ..jobs import ProjectRuntime, check_project_name
from ..responses import ProjectCreated, ProjectDetail, ProjectList, answer
from ..schemas import ProjectIn
from .common import AUTH, runtime, service

router = APIRouter(prefix="/api/projects", tags=["projects"], dependencies=AUTH)


@router.get("", summary="list projects", response_model=None,
            responses=answer(ProjectList, "every project in the database"))
def list_projects(request: Request) -> dict[str, Any]:
    reg = service(request).registry
    open_names = {rt.name for rt in reg.open_runtimes()}
    return {"projects": [{"name": n, "id": i, "created_at": t, "open": n in open_names} for i, n, t in reg.names()]}


@router.post("", status_code=201, summary="create a project",
             responses=answer(ProjectCreated, "created (`Location` names it)", 201))
def create_project(request: Request, body: ProjectIn) -> JSONResponse:
    reg = service(request).registry
    name = check_project_name(body.name)
    if reg.exists(name):
        raise ApiError(409, "conflict", f"a project named {name!r} exists already")
    rt = reg.get(name, create=True)
    return JSONResponse({"name": rt.name, "id": rt.store.project_id}, status_code=201,
                        headers={"Location": f"/api/projects/{quote(name)}"})


@router.get("/{project}", summary="a project's counts and re-chunk jobs", response_model=None,
            responses=answer(ProjectDetail, "counts and jobs"))
def get_project(request: Request, project: str) -> dict[str, Any]:
    rt = _rt(request, project)
    return {"name": rt.name, "id": rt.store.project_id, "documents": len(rt.store.documents()),
            "counts": rt.store.counts(), "jobs": rt.jobs()}


def _rt(request: Request, name: str) -> ProjectRuntime:
    return runtime(request, name)
