"""quadriga-mlflow: log quadriga runs to MLflow through the lifecycle hooks (``--with mlflow``)."""

__all__: list[str] = []
