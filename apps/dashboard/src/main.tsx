import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app";
import "./css/base.css";
import "./css/data.css";
import "./css/panels.css";

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
