"""Where the examples come from and how they reach the model: TFRecords, a competition's
images and CSV, or a TensorFlow Datasets set (source.py), read into static-shaped batches
(pipeline.py) and checked record by record (scan.py); the CSV files a user gives (tables.py)."""
