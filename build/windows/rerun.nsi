; The Windows installer of Rerun Desktop (NSIS 3, Debian's `nsis` package).
; build/dist-windows.sh compiles it with warnings as errors:
;
;   makensis -WX -DVERSION=v1.2.3 -DVERSION4=1.2.3.0 -DSTAGE=DIR -DOUTFILE=FILE rerun.nsi
;
; STAGE holds rerun.exe, rerun.ico and MicrosoftEdgeWebview2Setup.exe (the
; WebView2 bootstrapper that ships in the Wails module).
;
; Per user, no administrator rights: the app goes to
; %LOCALAPPDATA%\Programs\Rerun, its Start-menu entry to the user's Start
; menu, and its Add/Remove Programs entry under HKCU. The workspaces (the
; data folder) are never touched by installing, updating or uninstalling.

!ifndef VERSION | VERSION4 | STAGE | OUTFILE
  !error "pass -DVERSION=… -DVERSION4=a.b.c.d -DSTAGE=DIR -DOUTFILE=FILE (build/dist-windows.sh does)"
!endif

!define NAME "Rerun"
!define PUBLISHER "Rerun"
!define EXE "rerun.exe"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Rerun"
; The WebView2 Runtime's client id; its "pv" value is the installed version.
!define WEBVIEW2_KEY "Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"

Unicode true
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma
Name "${NAME}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\Rerun"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${NAME} ${VERSION}"

VIProductVersion "${VERSION4}"
VIFileVersion "${VERSION4}"
VIAddVersionKey /LANG=1033 "ProductName" "${NAME}"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileDescription" "${NAME} installer"
VIAddVersionKey /LANG=1033 "CompanyName" "${PUBLISHER}"
VIAddVersionKey /LANG=1033 "LegalCopyright" "${PUBLISHER}"

!include "MUI2.nsh"
!include "LogicLib.nsh"

!define MUI_ICON "${STAGE}\rerun.ico"
!define MUI_UNICON "${STAGE}\rerun.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${EXE}"
!define MUI_FINISHPAGE_RUN_TEXT "Open Rerun"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; A running Rerun keeps rerun.exe open: ask the person to quit it (from its
; tray icon or window) rather than killing coworkers mid-run.
!macro FreeExe un
  Function ${un}FreeExe
    ${Do}
      ClearErrors
      ${IfNot} ${FileExists} "$INSTDIR\${EXE}"
        ${Break}
      ${EndIf}
      Delete "$INSTDIR\${EXE}"
      ${IfNot} ${Errors}
        ${Break}
      ${EndIf}
      MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "Rerun is running. Quit it (its tray icon's Quit, or close its window), then choose Retry." /SD IDCANCEL IDRETRY +2
      Abort
    ${Loop}
  FunctionEnd
!macroend
!insertmacro FreeExe ""
!insertmacro FreeExe "un."

; The window is a WebView2: Windows 11 has the runtime, Windows 10 may not.
; When neither the machine-wide nor this user's runtime is there, the
; bootstrapper (1.7 MB, ships inside this installer) downloads and installs
; it. Without a network the app is still installed and says so.
Function WebView2
  SetRegView 64
  ReadRegStr $0 HKLM "SOFTWARE\WOW6432Node\${WEBVIEW2_KEY}" "pv"
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    ReadRegStr $0 HKLM "SOFTWARE\${WEBVIEW2_KEY}" "pv"
  ${EndIf}
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    ReadRegStr $0 HKCU "Software\${WEBVIEW2_KEY}" "pv"
  ${EndIf}
  SetRegView lastused
  ${If} $0 != ""
  ${AndIf} $0 != "0.0.0.0"
    DetailPrint "WebView2 Runtime $0 is installed"
    Return
  ${EndIf}
  DetailPrint "Installing the Microsoft Edge WebView2 Runtime"
  SetOutPath "$PLUGINSDIR"
  File "${STAGE}\MicrosoftEdgeWebview2Setup.exe"
  ExecWait '"$PLUGINSDIR\MicrosoftEdgeWebview2Setup.exe" /silent /install' $1
  ${If} $1 != 0
    MessageBox MB_OK|MB_ICONEXCLAMATION "The WebView2 Runtime could not be installed (code $1). Rerun's window needs it: connect to the internet and run this installer again, or install it from https://developer.microsoft.com/microsoft-edge/webview2/" /SD IDOK
  ${EndIf}
FunctionEnd

Section "Rerun"
  SetOutPath "$INSTDIR"
  Call FreeExe
  File "${STAGE}\${EXE}"
  File "${STAGE}\rerun.ico"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${NAME}.lnk" "$INSTDIR\${EXE}" "" "$INSTDIR\rerun.ico" 0 SW_SHOWNORMAL "" "Workspace of AI coworkers on this computer"

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${EXE},0"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "URLInfoAbout" "https://github.com/rerun-build/rerun-desktop"
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ; EstimatedSize is in KiB.
  SectionGetSize 0 $0
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0

  Call WebView2
SectionEnd

Section "Uninstall"
  Call un.FreeExe
  Delete "$INSTDIR\rerun.ico"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\${NAME}.lnk"
  ; Start at login (Settings) writes this value; without the app it would
  ; point at nothing.
  DeleteRegValue HKCU "Software\Microsoft\Windows\CurrentVersion\Run" "Rerun"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  DetailPrint "Your workspaces stay in their data folder; delete it yourself to remove them."
SectionEnd
